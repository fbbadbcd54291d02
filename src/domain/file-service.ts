import type { Config } from '../config.js'
import type { Store } from '../store/store.js'
import type { BotService } from './bot-service.js'

/** The Files API's rules (filled in by the Files API work). */
export class FileService {
  constructor(
    readonly deps: { config: Config; store: Store; bots: BotService },
  ) {}
}
