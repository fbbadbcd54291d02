import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { createSqliteStore, type SqliteOptions } from '../../src/store/sqlite.js'
import { describeStoreContract, newMessage, seed } from './store.contract.js'

const T0 = 1_700_000_000_000

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'parley-store-contract-'))
}

async function sqliteFactory(synchronous: SqliteOptions['synchronous']) {
  const dir = tempDir()
  const store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous })
  return {
    store,
    async cleanup() {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

describeStoreContract('sqlite (synchronous NORMAL)', () => sqliteFactory('NORMAL'))

/** Pragmas as seen by the store's own connection (synchronous and foreign_keys are per connection). */
async function pragmas(store: KyselyStore) {
  const one = async (name: string) => {
    const { rows } = await sql<Record<string, unknown>>`${sql.raw(`PRAGMA ${name}`)}`.execute(store.db)
    return Object.values(rows[0] ?? {})[0]
  }
  return {
    journalMode: await one('journal_mode'),
    synchronous: await one('synchronous'),
    foreignKeys: await one('foreign_keys'),
    busyTimeout: await one('busy_timeout'),
  }
}

describe.each([
  { synchronous: 'NORMAL' as const, expected: 1 },
  { synchronous: 'FULL' as const, expected: 2 },
])('sqlite store with synchronous $synchronous', ({ synchronous, expected }) => {
  let dir: string
  let file: string
  let store: KyselyStore | undefined

  beforeEach(() => {
    dir = tempDir()
    file = join(dir, 'nested', 'dir', 'parley.db')
  })

  afterEach(async () => {
    await store?.close()
    store = undefined
    rmSync(dir, { recursive: true, force: true })
  })

  it('opens the file in WAL mode with the configured durability and foreign keys on', async () => {
    store = await createSqliteStore({ file, synchronous })
    expect(store.dialect).toBe('sqlite')
    expect(await pragmas(store)).toEqual({ journalMode: 'wal', synchronous: expected, foreignKeys: 1, busyTimeout: 5000 })
    // WAL is a property of the file: a separate read-only connection sees it too
    const ro = new SqliteDatabase(file, { readonly: true, fileMustExist: true })
    try {
      expect(ro.pragma('journal_mode', { simple: true })).toBe('wal')
      const tables = (ro.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map((r) => r.name)
      for (const t of ['conversations', 'messages', 'events', 'participants', 'conversation_signals', 'users', 'user_keys']) expect(tables).toContain(t)
    } finally {
      ro.close()
    }
  })

  it('100 concurrent appends get consecutive seqs and survive a reopen', async () => {
    store = await createSqliteStore({ file, synchronous })
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    const rows = await Promise.all(Array.from({ length: 100 }, (_, i) => store!.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0, { i }))))
    expect(rows.map((r) => r!.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    await store.close()

    // reopening migrates nothing twice and finds every committed row
    store = await createSqliteStore({ file, synchronous })
    expect(await pragmas(store)).toMatchObject({ journalMode: 'wal', synchronous: expected, foreignKeys: 1 })
    expect((await store.getConversation(fx.a.id, 'conv'))!.lastSeq).toBe(100)
    for (const r of rows) expect(await store.getMessage(fx.a.id, r!.id)).toEqual(r)
    const next = await store.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0))
    expect(next!.seq).toBe(101)
  })

  it('foreign keys are enforced: deleting a conversation cascades', async () => {
    store = await createSqliteStore({ file, synchronous })
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    await store.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0))
    expect(await store.deleteConversation(fx.a.id, 'conv')).toBe(true)
    const counts = await sql<{ n: number }>`SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM participants) + (SELECT count(*) FROM conversation_signals) AS n`.execute(store.db)
    expect(Number(counts.rows[0]!.n)).toBe(0)
  })
})

describe('sqlite store reopened with another durability setting', () => {
  it('applies the setting of the current open', async () => {
    const dir = tempDir()
    const file = join(dir, 'parley.db')
    try {
      const full = await createSqliteStore({ file, synchronous: 'FULL' })
      expect((await pragmas(full)).synchronous).toBe(2)
      await full.close()
      const normal = await createSqliteStore({ file, synchronous: 'NORMAL' })
      expect(await pragmas(normal)).toMatchObject({ journalMode: 'wal', synchronous: 1, foreignKeys: 1 })
      await normal.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
