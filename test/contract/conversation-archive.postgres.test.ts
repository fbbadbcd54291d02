import { describe } from 'vitest'
import { createPostgresStore } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { describeConversationArchiveContract } from './conversation-archive.contract.js'

describe.skipIf(pgBaseUrl() === null)('postgres', () => {
  describeConversationArchiveContract('postgres', async () => {
    const url = await freshDatabase()
    const store = await createPostgresStore({ url, poolSize: 5 })
    return { store, cleanup: async () => { await store.close(); await dropDatabase(url) } }
  })
})
