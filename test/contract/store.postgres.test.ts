import { readdirSync } from 'node:fs'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_NOTIFY_BYTES } from '../../src/pubsub/pg-notify.js'
import { PostgresPubSub } from '../../src/pubsub/postgres.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { migrationsDir } from '../../src/store/migrator.js'
import { createPostgresStore, redactDatabaseUrl } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { botRow, describeStoreContract, newMessage, seed } from './store.contract.js'

/** Every migration of migrations/postgres, in order (the list grows with each feature). */
const MIGRATIONS = readdirSync(migrationsDir('postgres')).filter((f) => f.endsWith('.sql')).sort().map((f) => f.replace(/\.sql$/, ''))

const T0 = 1_700_000_000_000
const hasPg = pgBaseUrl() !== null

/** One database for this file: the contract only uses ids unique per test, so one store serves all. */
let url: string
let shared: KyselyStore | undefined

beforeAll(async () => {
  if (!hasPg) return
  url = await freshDatabase()
})

afterAll(async () => {
  await shared?.close()
  if (url) await dropDatabase(url)
})

describe.skipIf(!hasPg)('postgres', () => {
  describeStoreContract('postgres', async () => {
    shared ??= await createPostgresStore({ url, poolSize: 10 })
    return { store: shared, cleanup: async () => {} }
  })

  describe('postgres store specifics', () => {
    it('an append PostgreSQL aborts as a deadlock victim (40P01) is run again, alone or in a batch, instead of failing', async () => {
      const store = await createPostgresStore({ url, poolSize: 3 })
      try {
        const fx = await seed(store)
        const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
        for (const id of ['dl-1', 'dl-2', 'dl-3']) await store.createConversation(fx.a.id, id, owner.id, T0)
        // The next append statements lose a deadlock (as observed between two instances' batches).
        const execute = store.db.executeQuery.bind(store.db)
        let victims = 0
        vi.spyOn(store.db, 'executeQuery').mockImplementation(((query: Parameters<typeof execute>[0]) => {
          if ('sql' in query && query.sql.startsWith('WITH input AS') && victims < 3) {
            victims++
            return Promise.reject(Object.assign(new Error('deadlock detected'), { code: '40P01' }))
          }
          return execute(query)
        }) as typeof execute)
        const alone = await store.appendMessage(newMessage(fx.a.id, 'dl-1', owner.id, T0))
        expect(alone?.seq).toBe(1)
        const batch = await Promise.all(['dl-1', 'dl-2', 'dl-3'].map((c) => store.appendMessage(newMessage(fx.a.id, c, owner.id, T0))))
        expect(batch.map((m) => m?.seq)).toEqual([2, 1, 1])
        expect(victims).toBe(3)
        // Anything else still fails at once.
        vi.mocked(store.db.executeQuery).mockImplementationOnce((() => Promise.reject(Object.assign(new Error('boom'), { code: 'XX000' }))) as typeof execute)
        await expect(store.appendMessage(newMessage(fx.a.id, 'dl-1', owner.id, T0))).rejects.toThrow('boom')
      } finally {
        vi.restoreAllMocks()
        await store.close()
      }
    })

    it('deleteMessage and removeParticipant that lose a real deadlock (40P01) run again instead of failing', async () => {
      // A real lock cycle, no mock: another connection holds the conversation's row, the store's transaction deletes
      // its row (message, participant) and then waits for the conversation's row (the signal's seq); the other
      // connection then asks for the row the store deleted. The store's backend waited first, so its deadlock check
      // (deadlock_timeout, 1 s by default) runs first and aborts it. Run again after the other connection rolls back, it
      // succeeds. Before the retry, deleteMessage answered 500 (seen once in the stream-resume stress, 2 instances).
      const store = await createPostgresStore({ url, poolSize: 3 })
      const other = new pg.Client({ connectionString: url })
      await other.connect()
      try {
        const fx = await seed(store)
        const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
        const guest = await store.createUser({ integrationId: fx.a.id, id: 'guest', now: T0 })
        await store.createConversation(fx.a.id, 'dl-conv', owner.id, T0)
        await store.addParticipant(fx.a.id, 'dl-conv', guest.id, T0)
        const message = (await store.appendMessage(newMessage(fx.a.id, 'dl-conv', owner.id, T0)))!
        const blockedInStore = async () => {
          for (let i = 0; i < 200; i++) {
            const { rows } = await other.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
            )
            if (rows[0]!.n > 0) return
            await new Promise((r) => setTimeout(r, 25))
          }
          throw new Error('the store never waited for the conversation row')
        }
        const cycle = async <T>(op: () => Promise<T>, deletedRow: string, values: unknown[]): Promise<T> => {
          await other.query('BEGIN')
          await other.query(`SELECT 1 FROM conversations WHERE integration_id = $1 AND id = 'dl-conv' FOR UPDATE`, [fx.a.id])
          const running = op()
          running.catch(() => {})
          await blockedInStore()
          await other.query(deletedRow, values) // waits for the store's transaction: a cycle
          await other.query('ROLLBACK')
          return running
        }
        const deleted = await cycle(() => store.deleteMessage(fx.a.id, message.id, T0 + 1), 'SELECT 1 FROM messages WHERE id = $1 FOR UPDATE', [message.id])
        expect(deleted?.id).toBe(message.id)
        expect(await store.getMessage(fx.a.id, message.id)).toBeUndefined()
        const removed = await cycle(() => store.removeParticipant(fx.a.id, 'dl-conv', guest.id, T0 + 2),
          `SELECT 1 FROM participants WHERE integration_id = $1 AND conversation_id = 'dl-conv' AND user_id = 'guest' FOR UPDATE`, [fx.a.id])
        expect(removed).toBe(true)
        // Each left its signal once: the deletion, then the removal.
        const { rows } = await other.query<{ type: string }>(`SELECT type FROM conversation_signals WHERE integration_id = $1 AND conversation_id = 'dl-conv' ORDER BY seq`, [fx.a.id])
        expect(rows.map((r) => r.type)).toEqual(['participant_added', 'message_deleted', 'participant_removed'])
      } finally {
        await other.end().catch(() => {})
        await store.close()
      }
    })

    it('four instances starting at once on an empty database migrate it exactly once', async () => {
      const empty = await freshDatabase()
      const stores = await Promise.all(Array.from({ length: 4 }, () => createPostgresStore({ url: empty, poolSize: 3 })))
      try {
        const applied = await sql<{ name: string }>`SELECT name FROM parley_migrations ORDER BY name`.execute(stores[0]!.db)
        expect(MIGRATIONS.slice(0, 2)).toEqual(['0001_init', '0002_files'])
        expect(applied.rows.map((r) => r.name)).toEqual(MIGRATIONS)
        // every instance works on the same schema
        const fx = await seed(stores[1]!)
        const owner = await stores[2]!.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
        await stores[3]!.createConversation(fx.a.id, 'conv', owner.id, T0)
        const rows = await Promise.all(stores.flatMap((s) => Array.from({ length: 10 }, () => s.appendMessage(newMessage(fx.a.id, 'conv', owner.id, T0)))))
        expect(rows.map((r) => r!.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
      } finally {
        await Promise.all(stores.map((s) => s.close()))
        await dropDatabase(empty)
      }
      // a fifth start later finds nothing to do
      const again = await freshDatabase()
      const first = await createPostgresStore({ url: again })
      await first.close()
      const second = await createPostgresStore({ url: again })
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM parley_migrations`.execute(second.db)
      expect(rows[0]!.n).toBe(MIGRATIONS.length)
      await second.close()
      await dropDatabase(again)
    })

    it('a reader following signalsSince during concurrent appends of messages and events never skips a seq', async () => {
      shared ??= await createPostgresStore({ url, poolSize: 10 })
      const store = shared
      const fx = await seed(store)
      const owner = await store.createUser({ integrationId: fx.a.id, id: 'follower', now: T0 })
      for (let round = 0; round < 6; round++) {
        const conv = `race-${round}`
        await store.createConversation(fx.a.id, conv, owner.id, T0)
        let done = false
        let position = 0
        const seen = new Set<number>()
        const reader = (async () => {
          for (let last = false; !last; ) {
            last = done
            for (const s of await store.signalsSince(fx.a.id, conv, position, 1000)) {
              seen.add(s.seq)
              position = s.seq
            }
          }
        })()
        await Promise.all(Array.from({ length: 6 }, async (_, w) => {
          for (let i = 0; i < 25; i++) {
            if ((i + w) % 2) await store.appendMessage(newMessage(fx.a.id, conv, owner.id, T0))
            else await store.appendEvent({ id: `evt-${round}-${w}-${i}-${Math.random()}`, integrationId: fx.a.id, conversationId: conv, userId: owner.id, isBot: false, payload: { i }, now: T0 })
          }
        }))
        done = true
        await reader
        expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1))
      }
    })

    it('concurrent updateBot tag patches all land (no lost update of the tags document)', async () => {
      shared ??= await createPostgresStore({ url, poolSize: 10 })
      const store = shared
      const fx = await seed(store)
      for (let round = 0; round < 5; round++) {
        const bot = botRow(fx.workspace.id)
        await store.createBot(bot, [])
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.updateBot(bot.id, { tags: { [`t${i}`]: `v${i}` } }, T0 + 1)))
        const tags = (await store.getBot(bot.id))!.tags
        expect(tags).toEqual(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`t${i}`, `v${i}`])))
      }
    })

    it('statements with parameters and named result columns run prepared; SELECT * does not, and survives a column added meanwhile', async () => {
      const db = await freshDatabase()
      // One connection: every statement below runs on it, and so do the prepared-statement lookups.
      const store = await createPostgresStore({ url: db, poolSize: 1 })
      try {
        const fx = await seed(store)
        const owner = await store.createUser({ integrationId: fx.a.id, id: 'owner', now: T0 })
        await store.createConversation(fx.a.id, 'conv', owner.id, T0)
        const first = await store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0), requireParticipant: true })
        expect(await store.getUser(fx.a.id, owner.id)).toMatchObject({ id: 'owner' })
        const prepared = async () => (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(store.db)).rows.map((r) => r.statement)
        const before = await prepared()
        expect(before.some((t) => t.includes('INSERT INTO messages'))).toBe(true)
        expect(before.filter((t) => t.includes('*'))).toEqual([])

        // Another instance's migration adds a column: prepared statements and SELECT * keep working.
        const admin = new pg.Client({ connectionString: db })
        await admin.connect()
        await admin.query('ALTER TABLE messages ADD COLUMN later_column TEXT; ALTER TABLE users ADD COLUMN later_column TEXT')
        await admin.end()
        const second = await store.appendMessage({ ...newMessage(fx.a.id, 'conv', owner.id, T0), requireParticipant: true })
        expect(second!.seq).toBe(first!.seq + 1)
        expect((await store.getMessage(fx.a.id, second!.id))!.seq).toBe(second!.seq)
        expect(await store.getUser(fx.a.id, owner.id)).toMatchObject({ id: 'owner' })
        expect((await prepared()).sort()).toEqual(before.sort()) // the append reused its statement; getMessage's SELECT * is not prepared
      } finally {
        await store.close()
        await dropDatabase(db)
      }
    })

    it('with sendAppendNotifications, an append sends its notifications in its own statement, only when it happened', async () => {
      const store = await createPostgresStore({ url, poolSize: 4, sendAppendNotifications: true })
      const silent = await createPostgresStore({ url, poolSize: 2 })
      const pubsub = new PostgresPubSub({ url })
      try {
        expect(store.sendsAppendNotifications).toBe(true)
        expect(silent.sendsAppendNotifications).toBe(false)
        const fx = await seed(store)
        const owner = await store.createUser({ integrationId: fx.a.id, id: 'notifier', now: T0 })
        const outsider = await store.createUser({ integrationId: fx.a.id, id: 'outsider', now: T0 })
        const heard: string[] = []
        const channel = `conv:${fx.a.id}:notified`
        await pubsub.subscribe(channel, (m) => heard.push(m))
        await pubsub.subscribe('turns-test', (m) => heard.push(`turn ${m}`))
        /** Publishes a marker and waits for it: everything sent before it has arrived by then. */
        const settle = async (marker: string) => {
          await pubsub.publish(channel, marker)
          await vi.waitFor(() => expect(heard).toContain(marker), { timeout: 10_000 })
        }
        await store.createConversation(fx.a.id, 'notified', owner.id, T0)
        const notify = [{ channel, message: 'changed' }, { channel: 'turns-test', message: 'work' }]
        expect(await store.appendMessage({ ...newMessage(fx.a.id, 'notified', owner.id, T0), requireParticipant: true, notify })).toBeDefined()
        await settle('m1')
        expect(heard).toEqual(['changed', 'turn work', 'm1'])

        // Refused appends (not a participant; no such conversation) and the store without the option send nothing.
        heard.length = 0
        expect(await store.appendMessage({ ...newMessage(fx.a.id, 'notified', outsider.id, T0), requireParticipant: true, notify })).toBeUndefined()
        expect(await store.appendEvent({ id: 'evt-missing', integrationId: fx.a.id, conversationId: 'missing', userId: owner.id, isBot: false, payload: {}, notify, now: T0 })).toBeUndefined()
        expect(await silent.appendMessage({ ...newMessage(fx.a.id, 'notified', owner.id, T0), notify })).toBeDefined()
        await settle('m2')
        expect(heard).toEqual(['m2'])

        // A group commit: each append's notification goes out with it, also when one append of the batch is refused.
        heard.length = 0
        const conversations = Array.from({ length: 20 }, (_, i) => `group-${i}`)
        for (const c of conversations) await store.createConversation(fx.a.id, c, owner.id, T0)
        for (const c of conversations) await pubsub.subscribe(`conv:${fx.a.id}:${c}`, (m) => heard.push(`${c} ${m}`))
        const rows = await Promise.all([
          ...conversations.map((c) => store.appendMessage({ ...newMessage(fx.a.id, c, owner.id, T0), notify: [{ channel: `conv:${fx.a.id}:${c}`, message: 'changed' }] })),
          store.appendMessage({ ...newMessage(fx.a.id, 'notified', outsider.id, T0), requireParticipant: true, notify }),
        ])
        expect(rows.filter(Boolean)).toHaveLength(20)
        await settle('m3')
        expect(heard.filter((h) => h !== 'm3').sort()).toEqual(conversations.map((c) => `${c} changed`).sort())

        // A notification NOTIFY cannot carry is refused before anything is written.
        const bad = { ...newMessage(fx.a.id, 'notified', owner.id, T0), notify: [{ channel, message: 'x'.repeat(MAX_NOTIFY_BYTES + 1) }] }
        await expect(store.appendMessage(bad)).rejects.toThrow(RangeError)
        await expect(store.appendMessage({ ...bad, notify: [{ channel, message: 'nul\u0000' }] })).rejects.toThrow(TypeError)
        expect(await store.getMessage(fx.a.id, bad.id)).toBeUndefined()
      } finally {
        await pubsub.close()
        await Promise.all([store.close(), silent.close()])
      }
    })

    it('BIGINT and count(*) come back as JS numbers; synchronous_commit is on', async () => {
      shared ??= await createPostgresStore({ url, poolSize: 10 })
      const { rows } = await sql<{ big: unknown; n: unknown; num: unknown; sync: string }>`
        SELECT ${sql.lit(T0)}::bigint AS big, (SELECT count(*) FROM parley_migrations) AS n, 12.5::numeric AS num,
               current_setting('synchronous_commit') AS sync`.execute(shared.db)
      expect(rows[0]).toEqual({ big: T0, n: MIGRATIONS.length, num: 12.5, sync: 'on' })
      expect(shared.dialect).toBe('postgres')
    })

    it('the int8 parser is this pool’s own: the global pg types are untouched', async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        const { rows } = await client.query<{ big: unknown }>('SELECT 42::bigint AS big')
        expect(rows[0]!.big).toBe('42')
      } finally {
        await client.end()
      }
    })

    it('refuses a server with synchronous_commit=off', async () => {
      const db = await freshDatabase()
      const admin = new pg.Client({ connectionString: db })
      await admin.connect()
      const name = new URL(db).pathname.slice(1)
      await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`)
      await admin.end()
      await expect(createPostgresStore({ url: db })).rejects.toThrow(/synchronous_commit=off/)
      await dropDatabase(db)
    })

    it('an unreachable server fails the start with an error, not a hang', async () => {
      const started = Date.now()
      await expect(createPostgresStore({ url: 'postgres://parley:secret@127.0.0.1:1/none', connectionTimeoutMs: 2000 })).rejects.toThrow()
      expect(Date.now() - started).toBeLessThan(10_000)
    })

    it('redactDatabaseUrl never shows the password', () => {
      expect(redactDatabaseUrl('postgres://parley:s3cr%40t@db.example:5432/parley?sslmode=require')).toBe('postgres://parley:***@db.example:5432/parley?sslmode=require')
      expect(redactDatabaseUrl('postgres://db.example/parley?password=hunter2')).not.toContain('hunter2')
      expect(redactDatabaseUrl('not a url :: secret')).not.toContain('secret')
    })
  })
})
