import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite.js'
import { describeQualityContract } from './quality.contract.js'

describeQualityContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-quality.contract-'))
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  return { store, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
})
