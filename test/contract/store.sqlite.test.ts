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

/**
 * The synchronous fast path (src/store/sqlite-fast-path.ts) shares the one connection with Kysely,
 * whose transactions stay open across awaits. Were the fast path to run while one is open, its write
 * would land inside that transaction and vanish with its rollback, and its reads would see rows that
 * are never committed.
 */
describe('sqlite fast path next to an open Kysely transaction', () => {
  let dir: string
  let store: KyselyStore

  beforeEach(async () => {
    dir = tempDir()
    store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
  })

  afterEach(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('an append made meanwhile is not swallowed by that transaction\'s rollback', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    let message: ReturnType<KyselyStore['appendMessage']> | undefined
    let event: ReturnType<KyselyStore['appendEvent']> | undefined
    await expect(store.db.transaction().execute(async (trx) => {
      await trx.insertInto('settings').values({ key: 'probe', value: 'rolled back' }).execute()
      // Another request's appends while this transaction waits (not awaited here: they queue behind it).
      message = store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0 + 1), requireParticipant: true })
      event = store.appendEvent({ id: 'evt-1', integrationId: fx.a.id, conversationId: 'conv', userId: owner.id, isBot: false, payload: {}, now: T0 + 2 })
      await new Promise((resolve) => setTimeout(resolve, 20))
      throw new Error('roll back')
    })).rejects.toThrow('roll back')
    const m = await message!
    const e = await event!
    expect(m).toMatchObject({ seq: 1 })
    expect(e).toMatchObject({ seq: 2 })
    expect(await store.getMessage(fx.a.id, m!.id)).toEqual(m)
    expect(await store.getEvent(fx.a.id, 'evt-1')).toEqual(e)
    expect((await store.getConversation(fx.a.id, 'conv'))!.lastSeq).toBe(2)
    expect(await store.db.selectFrom('settings').selectAll().where('key', '=', 'probe').executeTakeFirst()).toBeUndefined()
  })

  it('an ifAbsent append made meanwhile (Kysely\'s append) answers the stored row and takes no seq', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    const first = (await store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0), ifAbsent: true }))!
    let again: ReturnType<KyselyStore['appendMessage']> | undefined
    let fresh: ReturnType<KyselyStore['appendMessage']> | undefined
    await store.db.transaction().execute(async () => {
      again = store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0 + 1), id: first.id, ifAbsent: true })
      fresh = store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0 + 2), ifAbsent: true })
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(await again!).toEqual({ ...first, existing: true })
    expect(await fresh!).toMatchObject({ seq: 2 })
    expect((await store.getConversation(fx.a.id, 'conv'))!.lastSeq).toBe(2)
  })

  it('an access check made meanwhile does not see that transaction\'s uncommitted rows', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    let access: ReturnType<KyselyStore['getConversationFor']> | undefined
    await expect(store.db.transaction().execute(async (trx) => {
      await trx.insertInto('conversations').values({
        integration_id: fx.a.id, id: 'ghost', owner_id: owner.id, last_seq: 0, last_at: 0, bot_seq: 0, bot_lease_owner: null, bot_lease_until: 0, created_at: T0, updated_at: T0,
      }).execute()
      await trx.insertInto('participants').values({ integration_id: fx.a.id, conversation_id: 'ghost', user_id: owner.id, created_at: T0 }).execute()
      access = store.getConversationFor(fx.a.id, 'ghost', owner.id)
      throw new Error('roll back')
    })).rejects.toThrow('roll back')
    expect(await access!).toBeUndefined()
    // and outside any transaction the fast path sees committed rows
    await store.createConversation(fx.a.id, 'real', owner.id, T0)
    expect(await store.getConversationFor(fx.a.id, 'real', owner.id)).toMatchObject({ isParticipant: true, conversation: { id: 'real', ownerId: owner.id } })
    expect(await store.getConversationFor(fx.a.id, 'real', 'someone-else')).toMatchObject({ isParticipant: false })
  })

  it('a bot turn\'s store calls made meanwhile survive its rollback and do not see its rows', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    const first = await store.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0))
    const userKey = { scope: 'user' as const, scopeId: `${fx.a.id}:owner` }
    let reads: Promise<unknown[]> | undefined
    let finished: Promise<unknown> | undefined
    let released: ReturnType<KyselyStore['releaseBotConversation']> | undefined
    await expect(store.db.transaction().execute(async (trx) => {
      await trx.insertInto('bot_states').values({ bot_id: fx.bot.id, scope: 'user', scope_id: userKey.scopeId, data: '{"ghost":true}', updated_at: T0 }).execute()
      await trx.updateTable('conversations').set({ last_seq: 5 }).where('id', '=', 'conv').execute()
      const claimed = store.claimBotConversation(fx.a.id, 'conv', 'me', T0, 60_000)
      reads = Promise.all([store.signalsSince(fx.a.id, 'conv', 0, 50), store.getBotStates(fx.bot.id, [userKey]), store.getMessage(fx.a.id, first!.id)])
      finished = claimed.then(() => store.finishBotTurn({ botId: fx.bot.id, integrationId: fx.a.id, conversationId: 'conv', seq: 1, now: T0 + 1, states: [{ ...userKey, data: { n: 1 } }], logs: [], lease: { owner: 'me', ttlMs: 60_000 } }))
      released = finished.then(() => store.releaseBotConversation(fx.a.id, 'conv', 'me'))
      await new Promise((resolve) => setTimeout(resolve, 20))
      throw new Error('roll back')
    })).rejects.toThrow('roll back')
    // The reads waited for the transaction's end: its rows were gone by then.
    expect(await reads).toEqual([[{ seq: 1, kind: 'message_created', message: first }], [undefined], first])
    await finished
    expect(await released).toEqual({ botSeq: 1, lastSeq: 1 })
    expect(await store.getBotStates(fx.bot.id, [userKey])).toEqual([{ n: 1 }])
    // The lease was released: another owner can claim at once.
    expect(await store.claimBotConversation(fx.a.id, 'conv', 'other', T0 + 2, 60_000)).toEqual({ botSeq: 1, lastSeq: 1 })
  })

  it('group commit: appends of one event-loop turn commit together; a failing one is refused alone', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    const taken = await store.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0))
    const drafts = Array.from({ length: 10 }, (_, i) => newMessage(fx.a.id, 'conv', owner.id, T0 + 1, { i }))
    drafts[4] = { ...drafts[4]!, id: taken!.id } // primary-key violation in the middle of the batch
    drafts[7] = { ...drafts[7]!, conversationId: 'missing' }
    const results = await Promise.allSettled([
      ...drafts.map((d) => store.appendMessage(d)),
      store.appendEvent({ id: 'evt-batch', integrationId: fx.a.id, conversationId: 'conv', userId: owner.id, isBot: false, payload: {}, now: T0 + 1 }),
    ])
    expect(results[4]!.status).toBe('rejected')
    expect(results[7]).toEqual({ status: 'fulfilled', value: undefined })
    const stored = results.filter((r, i) => i !== 4 && i !== 7).map((r) => (r as PromiseFulfilledResult<{ seq: number; id: string }>).value)
    // the failed append gave its sequence number back: 2..10 without a gap
    expect(stored.map((r) => r.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect((await store.getConversation(fx.a.id, 'conv'))!.lastSeq).toBe(10)
    for (const r of stored.slice(0, -1)) expect(await store.getMessage(fx.a.id, r.id)).toEqual(r)
    expect(await store.getEvent(fx.a.id, 'evt-batch')).toMatchObject({ seq: 10 })
    expect(await store.getMessage(fx.a.id, taken!.id)).toEqual(taken)
  })

  it('group commit: an append whose last write fails is undone alone (the batch runs again with savepoints)', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    await store.createConversation(fx.a.id, 'doomed', owner.id, T0)
    // Advancing the doomed conversation's position fails after its message row was inserted.
    await sql`CREATE TRIGGER doomed BEFORE UPDATE OF last_seq ON conversations WHEN NEW.id = 'doomed'
      BEGIN SELECT RAISE(ABORT, 'the disk said no'); END`.execute(store.db)
    const drafts = [
      newMessage(fx.a.id, 'conv', owner.id, T0 + 1, { i: 1 }),
      newMessage(fx.a.id, 'doomed', owner.id, T0 + 1, { i: 2 }),
      newMessage(fx.a.id, 'conv', owner.id, T0 + 1, { i: 3 }),
    ]
    const results = await Promise.allSettled(drafts.map((d) => store.appendMessage(d)))
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'the disk said no' } })
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<{ seq: number }>).value.seq)).toEqual([1, 2])
    expect(await store.getMessage(fx.a.id, drafts[1]!.id)).toBeUndefined()
    expect((await store.getConversation(fx.a.id, 'doomed'))!.lastSeq).toBe(0)
    expect((await store.getConversation(fx.a.id, 'conv'))!.lastSeq).toBe(2)
    for (const d of [drafts[0]!, drafts[2]!]) expect(await store.getMessage(fx.a.id, d.id)).toMatchObject({ payload: d.payload })
    // Alone in its batch, it is refused the same way.
    await expect(store.appendMessage(newMessage(fx.a.id, 'doomed', owner.id, T0 + 2))).rejects.toThrow('the disk said no')
    expect((await store.getConversation(fx.a.id, 'doomed'))!.lastSeq).toBe(0)
    expect(await store.listMessages(fx.a.id, 'doomed', { limit: 10 })).toMatchObject({ items: [] })
  })

  it('closing the store commits appends still waiting for their group commit', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    const appends = [1, 2, 3].map((i) => store.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0 + i)))
    await store.close()
    const rows = await Promise.all(appends)
    expect(rows.map((r) => r!.seq)).toEqual([1, 2, 3])
    store = await createSqliteStore({ file: join(dir, 'parley.db'), synchronous: 'NORMAL' })
    for (const r of rows) expect(await store.getMessage(fx.a.id, r!.id)).toEqual(r)
  })

  it('database errors of the fast path are rejections, not throws', async () => {
    const fx = await seed(store)
    const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
    await store.createConversation(fx.a.id, 'conv', owner.id, T0)
    const first = await store.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0))
    // the same message id twice violates the primary key
    const again = store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0), id: first!.id })
    await expect(again).rejects.toThrow(/UNIQUE|PRIMARY/)
    // the failed transaction rolled back its sequence number
    expect((await store.getConversation(fx.a.id, 'conv'))!.lastSeq).toBe(1)
  })
})
