import type SqliteDatabase from 'better-sqlite3'
import * as sqliteVec from 'sqlite-vec'
import { SQLITE_JS_DISTANCE, SQLITE_JS_HAMMING, blobVector } from './kysely/kysely-passage-vector-store.js'
import type { VectorEngine } from './passage-vector-store.js'

/**
 * Vector scoring on the SQLite connection: the sqlite-vec extension (vec_distance_cosine, in C) when it loads,
 * and always JS functions of the same meaning (parley_vec_distance_cosine, parley_vec_distance_hamming) that the store falls back to when
 * it does not (no prebuilt binary for the platform, extensions disabled). Returns what the store should use;
 * `jsOnly` leaves the extension unloaded (the fallback's contract tests and bench).
 */
export function loadVectorScoring(sqlite: SqliteDatabase.Database, jsOnly = false): VectorEngine {
  sqlite.function(SQLITE_JS_DISTANCE, { deterministic: true }, (a: unknown, b: unknown) => {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.byteLength !== b.byteLength || a.byteLength === 0) return null
    const x = blobVector(a)
    const y = blobVector(b)
    let dot = 0
    let nx = 0
    let ny = 0
    for (let i = 0; i < x.length; i++) {
      dot += x[i]! * y[i]!
      nx += x[i]! * x[i]!
      ny += y[i]! * y[i]!
    }
    return nx === 0 || ny === 0 ? null : 1 - dot / Math.sqrt(nx * ny)
  })
  sqlite.function(SQLITE_JS_HAMMING, { deterministic: true }, (a: unknown, b: unknown) => {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.byteLength !== b.byteLength) return null
    let d = 0
    for (let i = 0; i < a.byteLength; i++) {
      let x = a[i]! ^ b[i]!
      for (; x; x &= x - 1) d++
    }
    return d
  })
  if (jsOnly) return { name: 'sqlite-js', note: 'JS scoring chosen by the caller' }
  try {
    sqliteVec.load(sqlite)
    const version = sqlite.prepare('SELECT vec_version() AS v').get() as { v: string }
    return { name: 'sqlite-vec', note: `sqlite-vec ${version.v}` }
  } catch (err) {
    return { name: 'sqlite-js', note: `sqlite-vec could not be loaded (${(err as Error).message}); vectors are scored by a JS function (slower)` }
  }
}
