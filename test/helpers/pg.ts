/**
 * PostgreSQL for tests: the cluster the global setup started (test/helpers/pg-global-setup.ts),
 * or null when the run has none (PostgreSQL tests then skip).
 */
import { inject } from 'vitest'
import { createDatabase, dropDatabase } from './pg-cluster.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Maintenance URL of the run's PostgreSQL cluster (CREATE DATABASE allowed), or null. */
    parleyPgUrl: string | null
  }
}

export function pgBaseUrl(): string | null {
  return inject('parleyPgUrl') ?? null
}

/** The store the API, end-to-end and security suites run on: PARLEY_TEST_STORE=postgres|sqlite (default sqlite). */
export function testStoreKind(): 'sqlite' | 'postgres' {
  const value = process.env.PARLEY_TEST_STORE || 'sqlite'
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`PARLEY_TEST_STORE must be sqlite or postgres, got "${value}"`)
  return value
}

/** A new empty database on the run's cluster; fails clearly when the run has no PostgreSQL. */
export async function freshDatabase(): Promise<string> {
  const base = pgBaseUrl()
  if (!base) {
    throw new Error('This test needs PostgreSQL, but the run has none: install Debian\'s `postgresql` package (initdb, pg_ctl) or set PARLEY_TEST_DATABASE_URL')
  }
  return createDatabase(base)
}

export { dropDatabase }
