import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite.js'
import { describePassageVectorContract } from './passage-vectors.contract.js'

const open = async (jsVectorScoring = false) => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-vectors-contract-'))
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL', jsVectorScoring })
  return { store, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }) } }
}

// sqlite-vec ships prebuilt for this platform: it must load here.
describePassageVectorContract('sqlite (sqlite-vec)', () => open(), ['sqlite-vec'])

// The fallback when the extension cannot load: the same contract through the JS scoring function.
describePassageVectorContract('sqlite (JS scoring fallback)', () => open(true), ['sqlite-js'])
