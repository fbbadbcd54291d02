// EXPERIMENT ONLY (not how Parley runs): caches better-sqlite3 prepared statements by SQL text, to
// measure what a statement cache in src/store/sqlite.ts would buy. Kysely's SqliteDriver calls
// db.prepare(sql) for every query. Usage, e.g.:
//   NODE_OPTIONS="--import $PWD/bench/tools/stmt-cache-preload.mjs" BENCH_SERVERS=baseline,parley npm run bench
// (RESULTS.md then describes a modified Parley: keep such runs out of the committed results.)
import { createRequire } from 'node:module'

const Database = createRequire(import.meta.url)('better-sqlite3')
const prepare = Database.prototype.prepare
const caches = new WeakMap()
Database.prototype.prepare = function (sql) {
  let cache = caches.get(this)
  if (!cache) caches.set(this, (cache = new Map()))
  let statement = cache.get(sql)
  if (!statement) {
    statement = prepare.call(this, sql)
    if (cache.size < 1000) cache.set(sql, statement)
  }
  return statement
}
