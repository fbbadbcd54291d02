import { describe } from 'vitest'
import { createPostgresStore } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { describeHandoffContract } from './handoffs.contract.js'

describe.skipIf(pgBaseUrl() === null)('postgres', () => {
  // Two pools on one database, as two instances would have.
  describeHandoffContract('postgres', async () => {
    const url = await freshDatabase()
    const store = await createPostgresStore({ url, poolSize: 5 })
    const second = await createPostgresStore({ url, poolSize: 3 })
    return { store, second, cleanup: async () => { await second.close(); await store.close(); await dropDatabase(url) } }
  })
})
