import { describe } from 'vitest'
import { createPostgresStore } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { describeIntegrationOutboxContract } from './integration-outbox.contract.js'

describe.skipIf(pgBaseUrl() === null)('postgres', () => {
  // Two pools on one database, as two instances would have.
  describeIntegrationOutboxContract('postgres', async () => {
    const url = await freshDatabase()
    const store = await createPostgresStore({ url, poolSize: 5 })
    const second = await createPostgresStore({ url, poolSize: 3 })
    return { store, second, cleanup: async () => { await second.close(); await store.close(); await dropDatabase(url) } }
  })
})
