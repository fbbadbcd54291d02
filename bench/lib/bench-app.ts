import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { LocalBlobStore } from '../../src/blobs/local.js'
import { loadConfig } from '../../src/config.js'
import { bootstrap } from '../../src/domain/bootstrap.js'
import type { App } from '../../src/http/types.js'
import { MemoryPubSub } from '../../src/pubsub/memory.js'
import { createPostgresStore } from '../../src/store/postgres.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { createDatabase, findPostgresBinaries, startPgCluster } from '../../test/helpers/pg-cluster.js'

/**
 * `run` against a fresh in-process Parley (no HTTP listener) on a new SQLite file, or on a new database of the
 * PostgreSQL cluster at `pgUrl`, bootstrapped; `headers` authenticate as the demo bot's owner. Closed and
 * removed after; `extras`: its store and the owner's token and workspace (Admin API calls). `env`: settings (e.g. PARLEY_KB_WORD_VECTORS=off for lexical retrieval).
 */
export async function withBenchApp<R>(kind: 'sqlite' | 'postgres', pgUrl: string | undefined,
  run: (app: App, headers: Record<string, string>, botId: string, extras: { store: KyselyStore; token: string; workspaceId: string }) => Promise<R>, env: Record<string, string> = {}): Promise<R> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-app-'))
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...env })
  const store: KyselyStore = kind === 'sqlite'
    ? await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
    : await createPostgresStore({ url: await createDatabase(pgUrl!), poolSize: 5 })
  const pubsub = new MemoryPubSub()
  const app = await buildApp({ config, store, pubsub, blobs: new LocalBlobStore(join(dataDir, 'blobs')), logger: false })
  try {
    await app.ready()
    const { credentials } = await bootstrap(store, dataDir, config.publicUrl)
    return await run(app, { authorization: `Bearer ${credentials!.token}`, 'x-bot-id': credentials!.botId }, credentials!.botId, { store, token: credentials!.token, workspaceId: credentials!.workspaceId })
  } finally {
    await app.close()
    await pubsub.close()
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/**
 * `measure` on SQLite, then on a throwaway PostgreSQL cluster when Debian's binaries are installed (`only`: one of the
 * two); the reports by backend name (`names`), in that order.
 */
export async function onSqliteThenPostgres<R>(measure: (kind: 'sqlite' | 'postgres', pgUrl?: string) => Promise<R>,
  names: Record<'sqlite' | 'postgres', string>, only?: 'sqlite' | 'postgres'): Promise<[string, R][]> {
  const reports: [string, R][] = []
  if (only !== 'postgres') reports.push([names.sqlite, await measure('sqlite')])
  if (only !== 'sqlite' && findPostgresBinaries()) {
    const cluster = await startPgCluster()
    try {
      reports.push([names.postgres, await measure('postgres', cluster.url)])
    } finally {
      await cluster.stop()
    }
  }
  return reports
}
