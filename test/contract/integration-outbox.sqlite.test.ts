import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite.js'
import { describeIntegrationOutboxContract } from './integration-outbox.contract.js'

// One process writes the SQLite file: the "second instance" is the same store.
describeIntegrationOutboxContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-outbox-contract-'))
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  return { store, second: store, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
})
