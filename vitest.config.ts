import { configDefaults, defineConfig } from 'vitest/config'
import { findPostgresBinaries } from './test/helpers/pg-cluster.js'

/**
 * The backend matrix, as vitest projects in one run:
 * - `core`: unit and contract tests. They do not use the harness's store (each contract suite
 *   names its engine: store.sqlite / store.postgres, pubsub.memory / pubsub.postgres), so they
 *   run once.
 * - `sqlite` and `postgres`: the suites that start Parley through test/helpers/harness.ts
 *   (API, end-to-end, security, runtime), once per engine. PARLEY_TEST_STORE=postgres runs only the
 *   PostgreSQL pass (`npm run test:postgres`), =sqlite only the SQLite one; unset runs both when
 *   PostgreSQL is available or required (PARLEY_REQUIRE_POSTGRES=1), else SQLite alone.
 * - `cluster`: test/cluster/**, several `parley serve` processes behind Debian's nginx on the run's
 *   PostgreSQL (issue #5's end-to-end proof); only when PostgreSQL is available or required.
 * One PostgreSQL cluster serves the whole run (test/helpers/pg-global-setup.ts).
 */
const CLUSTER_SUITES = ['test/cluster/**/*.test.ts']
const HARNESS_SUITES = ['test/api/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/security/**/*.test.ts', 'test/runtime/**/*.test.ts', 'test/fuzz/**/*.test.ts']

const env = process.env
const only = env.PARLEY_TEST_STORE === 'postgres' || env.PARLEY_TEST_STORE === 'sqlite' ? env.PARLEY_TEST_STORE : undefined
const postgresAvailable = Boolean(env.PARLEY_TEST_DATABASE_URL) || findPostgresBinaries() !== undefined
const stores = only ? [only] : postgresAvailable || env.PARLEY_REQUIRE_POSTGRES === '1' ? ['sqlite', 'postgres'] : ['sqlite']

export default defineConfig({
  test: {
    // Above the helpers' 20 s waits (test/runtime/helpers.ts WAIT_MS), so a slow wait fails with its own message.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Tests that start servers pick free ports; files run in parallel, two at a time (vitest's default is
    // cores - 1, a single file at a time on this 2-core machine, while most files wait on I/O and timers).
    fileParallelism: true,
    maxWorkers: 2,
    // A worker keeps its modules between test files (each file still builds its own servers, stores and clients
    // through the harness): evaluating the app's module graph again for each of ~250 files was a third of the run.
    isolate: false,
    globalSetup: ['test/helpers/pg-global-setup.ts'],
    projects: [
      {
        extends: true as const,
        test: { name: 'core', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...HARNESS_SUITES, ...CLUSTER_SUITES] },
      },
      ...(only !== 'sqlite' && (postgresAvailable || env.PARLEY_REQUIRE_POSTGRES === '1')
        ? [{ extends: true as const, test: { name: 'cluster', include: CLUSTER_SUITES, testTimeout: 120_000, hookTimeout: 240_000 } }]
        : []),
      ...stores.map((store) => ({
        extends: true as const,
        test: { name: store, include: HARNESS_SUITES, env: { PARLEY_TEST_STORE: store } },
      })),
    ],
  },
})
