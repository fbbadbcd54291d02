import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite.js'
import { describePassageVectorContract } from './passage-vectors.contract.js'

const open = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-vectors-contract-'))
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  return { store, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
}

// sqlite-vec ships prebuilt for this platform: it must load here.
describePassageVectorContract('sqlite (sqlite-vec)', open, ['sqlite-vec'])

// The fallback when the extension cannot load: the same contract through the JS scoring function.
describePassageVectorContract('sqlite (JS scoring fallback)', async () => {
  const opened = await open()
  ;(opened.store as Awaited<ReturnType<typeof createSqliteStore>>).passageVectors.useEngine({ name: 'sqlite-js', note: 'forced by the test' })
  return opened
}, ['sqlite-js'])
