import { describe } from 'vitest'
import { createPostgresStore } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { describeLlmContract } from './llm.contract.js'

describe.skipIf(pgBaseUrl() === null)('postgres', () => {
  describeLlmContract('postgres', async () => {
    const url = await freshDatabase()
    const store = await createPostgresStore({ url, poolSize: 3 })
    return { store, cleanup: async () => { await store.close(); await dropDatabase(url) } }
  })
})
