import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect, type SqliteDialectConfig } from 'kysely'
import type { Database } from './kysely/schema.js'
import type { KyselyStore } from './kysely/kysely-store.js'
import { SqliteStore } from './sqlite-fast-path.js'
import { migrateToLatest } from './migrator.js'
import { registerRegexp } from './sqlite-regexp.js'
import { loadVectorScoring } from './sqlite-vectors.js'

/**
 * Kysely prepares every statement again on each query; preparing is a large share of a request's
 * cost. Statements are reusable (Kysely runs them one at a time on this single connection and we
 * never stream), so each distinct SQL text is prepared once. Query shapes are finite; the cap only
 * guards against a pathological caller.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const cache = new Map<string, SqliteDatabase.Statement>()
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      let statement = cache.get(sql)
      if (!statement) {
        statement = sqlite.prepare(sql)
        if (cache.size >= 2_000) cache.clear()
        cache.set(sql, statement)
      }
      return statement
    },
  }
}

export interface SqliteOptions {
  file: string
  synchronous: 'NORMAL' | 'FULL'
  /** Score passage vectors with the JS function even where sqlite-vec loads (the fallback's contract tests and bench). */
  jsVectorScoring?: boolean
}

/** The embedded engine: one SQLite file in WAL mode, migrated on open. */
export async function createSqliteStore(options: SqliteOptions): Promise<KyselyStore> {
  if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true })
  const sqlite = new SqliteDatabase(options.file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma(`synchronous = ${options.synchronous}`)
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  // Startup self-check: refuse to run with a durability setting other than the configured one.
  const journal = sqlite.pragma('journal_mode', { simple: true })
  const sync = sqlite.pragma('synchronous', { simple: true })
  const expectedSync = options.synchronous === 'FULL' ? 2 : 1
  if ((options.file !== ':memory:' && journal !== 'wal') || sync !== expectedSync) {
    sqlite.close()
    throw new Error(`SQLite refused the durability settings (journal_mode=${String(journal)}, synchronous=${String(sync)})`)
  }
  registerRegexp(sqlite)
  // Knowledge passage vectors: sqlite-vec, or a JS function when it cannot load (the store reports which).
  const vectorScoring = loadVectorScoring(sqlite, options.jsVectorScoring)
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  await migrateToLatest(db, 'sqlite')
  return new SqliteStore(db, sqlite, vectorScoring)
}
