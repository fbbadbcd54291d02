/**
 * Issue #5: several instances started at the same moment on an empty PostgreSQL database create
 * exactly one bootstrap workspace, owner account, access token and demo bot (the bootstrap runs
 * under a database-wide advisory lock), and the token works on every instance.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from '../cli/helpers.js'
import { bootstrap } from '../../src/domain/bootstrap.js'
import { createPostgresStore } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase } from '../helpers/pg.js'
import { freePort, Processes, query, readCredentials, type Instance } from './helpers.js'

describe('bootstrap with several instances starting at once', () => {
  const procs = new Processes()
  const databases: string[] = []

  beforeAll(async () => {
    await ensureBuilt()
  }, 240_000)

  afterAll(async () => {
    await procs.stopAll()
    for (const url of databases) await dropDatabase(url).catch(() => {})
  }, 60_000)

  it('bootstrap() run at the same moment by five instances (five pools on one database): exactly one creates', async () => {
    const databaseUrl = await freshDatabase()
    databases.push(databaseUrl)
    const stores = await Promise.all([0, 1, 2, 3, 4].map(() => createPostgresStore({ url: databaseUrl, poolSize: 3 })))
    try {
      const results = await Promise.allSettled(stores.map((store) => bootstrap(store, procs.tempDir('parley-boot-'), 'http://127.0.0.1:1')))
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
      const created = results.filter((r) => r.status === 'fulfilled' && r.value.created)
      expect(created).toHaveLength(1)
      expect(await stores[0]!.countWorkspaces()).toBe(1)
      expect((await query<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM access_tokens'))[0]!.n).toBe(1)
      expect((await query<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM bots'))[0]!.n).toBe(1)
    } finally {
      await Promise.all(stores.map((s) => s.close()))
    }
  })

  // On a migrated database (schema in place, no data) all three reach the bootstrap at the same
  // moment, the sharpest race between processes (scale-out.test.ts starts two on an empty one).
  it('three instances started at once on a migrated, empty database: one workspace, one account, one token, one demo bot', async () => {
    const databaseUrl = await freshDatabase()
    databases.push(databaseUrl)
    await (await createPostgresStore({ url: databaseUrl, poolSize: 1 })).close()
    // Each instance has its own data directory, so each one's banner and credentials.json show what it did.
    const dirs = [0, 1, 2].map(() => procs.tempDir('parley-boot-'))
    const ports = [await freePort(), await freePort(), await freePort()]
    const instances: Instance[] = await Promise.all(
      dirs.map((dataDir, i) => procs.start(`I${i}`, { port: ports[i]!, databaseUrl, dataDir, publicUrl: `http://127.0.0.1:${ports[i]}` }).started),
    )

    const count = async (table: string) => ((await query<{ n: number }>(databaseUrl, `SELECT count(*)::int AS n FROM ${table}`))[0]!).n
    expect(await count('workspaces')).toBe(1)
    expect(await count('accounts')).toBe(1)
    expect(await count('workspace_members')).toBe(1)
    expect(await count('access_tokens')).toBe(1)
    expect(await count('bots')).toBe(1)
    expect(await count('integrations')).toBe(1)

    // Exactly one instance created it (and printed the token); the others found it.
    const creators = instances.filter((i) => i.output.stdout.includes('Access token:'))
    expect(creators).toHaveLength(1)
    const withCredentials = dirs.filter((d) => existsSync(join(d, 'credentials.json')))
    expect(withCredentials).toHaveLength(1)
    for (const other of instances.filter((i) => i !== creators[0])) expect(other.output.stdout).toContain('credentials.json is missing')

    // The one token works on every instance (the database is shared).
    const credentials = readCredentials(withCredentials[0]!)
    for (const instance of instances) {
      const res = await fetch(`${instance.url}/v1/admin/bots/${credentials.botId}`, {
        headers: { authorization: `Bearer ${credentials.token}`, 'x-workspace-id': credentials.workspaceId },
      })
      expect(res.status).toBe(200)
    }
  }, 120_000)
})
