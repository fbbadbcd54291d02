import type { Kysely } from 'kysely'
import type { Database } from './schema.js'
import type { FileStore } from '../file-store.js'

export class KyselyFileStore implements FileStore {
  constructor(readonly db: Kysely<Database>) {}
}
