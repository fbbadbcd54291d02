import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'

const PG = 'postgres://parley:secret@db:5432/parley'

describe('config: PARLEY_BLOB_STORE', () => {
  it('defaults to postgres when PARLEY_DATABASE_URL is set, local otherwise', () => {
    expect(loadConfig({}).blobStore).toBe('local')
    expect(loadConfig({ PARLEY_DATABASE_URL: PG }).blobStore).toBe('postgres')
    expect(loadConfig({ PARLEY_DATABASE_URL: PG }).blobPoolSize).toBe(4)
  })

  it('local can be chosen on PostgreSQL (a shared volume), and the pool size set', () => {
    const config = loadConfig({ PARLEY_DATABASE_URL: PG, PARLEY_BLOB_STORE: 'LOCAL', PARLEY_BLOB_POOL_SIZE: '9' })
    expect(config.blobStore).toBe('local')
    expect(config.blobPoolSize).toBe(9)
  })

  it('refuses postgres without a database, unknown values and a zero pool, without echoing the URL', () => {
    expect(() => loadConfig({ PARLEY_BLOB_STORE: 'postgres' })).toThrow(/needs PARLEY_DATABASE_URL/)
    expect(() => loadConfig({ PARLEY_BLOB_STORE: 's3' })).toThrow(/must be local or postgres, got "s3"/)
    expect(() => loadConfig({ PARLEY_DATABASE_URL: PG, PARLEY_BLOB_POOL_SIZE: '0' })).toThrow(/PARLEY_BLOB_POOL_SIZE/)
  })
})

describe('config: PARLEY_DATABASE_URL', () => {
  it('takes a PostgreSQL on the same host over its Unix socket, in both of libpq\'s forms, and refuses what is not a postgres URL', () => {
    for (const url of ['postgres://parley@/parley?host=/var/run/postgresql', 'postgresql://parley@localhost/parley?host=/var/run/postgresql&port=5433']) {
      expect(loadConfig({ PARLEY_DATABASE_URL: url }).databaseUrl).toBe(url)
    }
    expect(() => loadConfig({ PARLEY_DATABASE_URL: 'mysql://u@db/db' })).toThrow(/must start with postgres:\/\//)
    expect(() => loadConfig({ PARLEY_DATABASE_URL: 'postgres://u@:x/db' })).toThrow(/not a valid URL/)
  })
})
