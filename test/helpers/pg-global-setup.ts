/**
 * Vitest global setup: ONE throwaway PostgreSQL cluster for the whole run (every project), whose
 * maintenance URL reaches the tests through `inject('parleyPgUrl')` (see ./pg.ts). Test files
 * create their own databases on it.
 *
 * - PARLEY_TEST_DATABASE_URL=postgres://… uses an existing server instead (it needs CREATEDB).
 * - Without Debian's server binaries the PostgreSQL tests skip, with a message; with
 *   PARLEY_REQUIRE_POSTGRES=1 the run fails instead.
 */
import type { TestProject } from 'vitest/node'
import { findPostgresBinaries, startPgCluster, type PgCluster } from './pg-cluster.js'

interface Shared {
  refs: number
  cluster: Promise<PgCluster | undefined>
}

// Projects each run their global setup (in this one process): they share one cluster.
const KEY = Symbol.for('parley.test.pgCluster')
const WARNED = Symbol.for('parley.test.pgWarned')
const registry = globalThis as unknown as Record<symbol, Shared | boolean | undefined>

export const requirePostgres = () => process.env.PARLEY_REQUIRE_POSTGRES === '1'

async function acquire(): Promise<PgCluster | undefined> {
  let shared = registry[KEY] as Shared | undefined
  if (!shared) {
    const binaries = findPostgresBinaries()
    const cluster = binaries
      ? (async () => {
          const started = Date.now()
          const c = await startPgCluster({ binaries })
          // Interrupted runs (Ctrl-C) skip the teardown: never leave a server behind.
          const onExit = () => c.stopSync()
          process.once('exit', onExit)
          const stop = c.stop
          c.stop = async () => {
            process.off('exit', onExit)
            await stop()
          }
          process.stdout.write(`[parley tests] PostgreSQL ${c.version} cluster on 127.0.0.1:${c.port} (${c.dir}), started in ${Date.now() - started} ms\n`)
          return c
        })()
      : Promise.resolve(undefined)
    shared = { refs: 0, cluster }
    registry[KEY] = shared
  }
  shared.refs++
  return shared.cluster
}

async function release(): Promise<void> {
  const shared = registry[KEY] as Shared | undefined
  if (!shared || --shared.refs > 0) return
  registry[KEY] = undefined
  const cluster = await shared.cluster.catch(() => undefined)
  await cluster?.stop()
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const external = process.env.PARLEY_TEST_DATABASE_URL
  if (external) {
    project.provide('parleyPgUrl', external)
    return undefined
  }
  const cluster = await acquire()
  if (!cluster) {
    await release()
    if (requirePostgres()) {
      throw new Error('PARLEY_REQUIRE_POSTGRES=1, but PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb and pg_ctl (apt-get install postgresql)')
    }
    if (!registry[WARNED]) {
      registry[WARNED] = true
      process.stdout.write('\n[parley tests] PostgreSQL not found (/usr/lib/postgresql/*/bin/initdb, pg_ctl): PostgreSQL tests are SKIPPED. ' +
        'Install Debian\'s `postgresql` package to run them; PARLEY_REQUIRE_POSTGRES=1 makes this an error.\n\n')
    }
    project.provide('parleyPgUrl', null)
    return undefined
  }
  project.provide('parleyPgUrl', cluster.url)
  return release
}
