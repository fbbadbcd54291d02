import type { BotResourceCleaner, BotService } from './bot-service.js'

/**
 * Deleting a bot with everything it has outside its rows: the file blobs and knowledge passages (FileService), the
 * tables' column indexes (TablesService), the queued webhook bodies (WebhookService). Composed after all of them
 * (compose.ts), so BotService, which they are built on, needs no cleaner registered after its construction.
 * The Admin API's deleteBot and a workspace's deletion delete bots through it.
 */
export class BotRemoval {
  constructor(
    private readonly bots: BotService,
    private readonly cleaners: readonly BotResourceCleaner[],
  ) {}

  deleteBot(workspaceId: string, id: string): Promise<void> {
    return this.bots.deleteBot(workspaceId, id, this.cleaners)
  }
}
