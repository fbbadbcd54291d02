import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPostgresStore } from '../../src/store/postgres.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { createDatabase, findPostgresBinaries, startPgCluster } from '../../test/helpers/pg-cluster.js'

/** For PostgreSQL: a second store on the same database, connected over the server's Unix socket (same host). */
export interface BackendExtras {
  overUnixSocket?: () => Promise<KyselyStore>
}

/**
 * `measure` on a fresh SQLite file, then on a fresh database of a throwaway PostgreSQL cluster when Debian's
 * binaries are installed; each store closed (and its files removed) after its run. The reports in that order.
 */
export async function onEachBackend<R>(name: string, measure: (backend: string, store: KyselyStore, extras: BackendExtras) => Promise<R>): Promise<R[]> {
  const reports: R[] = []
  const dir = mkdtempSync(join(tmpdir(), `parley-bench-${name}-`))
  const lite = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  try { reports.push(await measure('SQLite', lite, {})) } finally { await lite.close(); rmSync(dir, { recursive: true, force: true }) }
  if (findPostgresBinaries()) {
    const cluster = await startPgCluster()
    try {
      const url = await createDatabase(cluster.url)
      const store = await createPostgresStore({ url, poolSize: 5 })
      // node-postgres takes a socket directory as the host (`?host=/dir`): what a single-host install configures
      const database = new URL(url).pathname.slice(1)
      const socketUrl = `postgres://postgres@localhost/${database}?host=${encodeURIComponent(cluster.dir)}&port=${cluster.port}`
      const opened: KyselyStore[] = []
      const overUnixSocket = async () => {
        const other = await createPostgresStore({ url: socketUrl, poolSize: 5 })
        opened.push(other)
        return other
      }
      try {
        reports.push(await measure('PostgreSQL 15', store, { overUnixSocket }))
      } finally {
        for (const other of opened) await other.close()
        await store.close()
      }
    } finally {
      await cluster.stop()
    }
  }
  return reports
}
