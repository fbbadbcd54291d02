import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPostgresStore } from '../../src/store/postgres.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { createDatabase, findPostgresBinaries, startPgCluster } from '../../test/helpers/pg-cluster.js'

/**
 * `measure` on a fresh SQLite file, then on a fresh database of a throwaway PostgreSQL cluster when Debian's
 * binaries are installed; each store closed (and its files removed) after its run. The reports in that order.
 */
export async function onEachBackend<R>(name: string, measure: (backend: string, store: KyselyStore) => Promise<R>): Promise<R[]> {
  const reports: R[] = []
  const dir = mkdtempSync(join(tmpdir(), `parley-bench-${name}-`))
  const lite = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  try { reports.push(await measure('SQLite', lite)) } finally { await lite.close(); rmSync(dir, { recursive: true, force: true }) }
  if (findPostgresBinaries()) {
    const cluster = await startPgCluster()
    try {
      const store = await createPostgresStore({ url: await createDatabase(cluster.url), poolSize: 5 })
      try { reports.push(await measure('PostgreSQL 15', store)) } finally { await store.close() }
    } finally {
      await cluster.stop()
    }
  }
  return reports
}
