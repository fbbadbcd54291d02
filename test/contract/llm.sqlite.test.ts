import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite.js'
import { describeLlmContract } from './llm.contract.js'

describeLlmContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-llm.contract-'))
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  return { store, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
})
