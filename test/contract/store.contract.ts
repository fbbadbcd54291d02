/**
 * The Store contract: every engine (embedded SQLite now, PostgreSQL later) must pass this suite
 * unchanged. It only talks to the `Store` interface and only relies on documented semantics.
 *
 * The factory must return a usable store; it may be shared with other tests (every id used here
 * is unique per test), and `cleanup` is called after each test.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ApiError } from '../../src/lib/errors.js'
import { encodeCursor } from '../../src/store/cursor.js'
import {
  UniqueViolation,
  type BotRow, type ConversationRow, type IntegrationRow, type Json, type JsonObject, type MessageRow, type NewMessage, type Page,
  type SignalRecord, type Store, type UserRow, type WorkspaceRow,
} from '../../src/store/store.js'

export type StoreFactory = () => Promise<{ store: Store; cleanup(): Promise<void> }>

const T0 = 1_700_000_000_000

const uid = (prefix = 'id') => `${prefix}-${randomUUID()}`

export interface Fixture {
  workspace: WorkspaceRow
  bot: BotRow
  /** Two integrations of the same bot: users and conversations are scoped to one of them. */
  a: IntegrationRow
  b: IntegrationRow
}

export function botRow(workspaceId: string, now = T0, over: Partial<BotRow> = {}): BotRow {
  return {
    id: uid('bot'), workspaceId, name: 'Contract bot', description: null, tags: {}, dev: false,
    signingSecret: uid('secret'), code: null, maxExecutionTime: null, deployedAt: null, url: null, webchat: null, actions: null, createdAt: now, updatedAt: now, ...over,
  }
}

export function integrationRow(botId: string, name: string, now = T0, over: Partial<IntegrationRow> = {}): IntegrationRow {
  return {
    id: uid('int'), botId, name, webhookId: uid('wh'), encryptionKey: uid('key'), enabled: true,
    configuration: {}, createdAt: now, updatedAt: now, ...over,
  }
}

/** A workspace, one bot and two integrations of it. */
export async function seed(store: Store, now = T0): Promise<Fixture> {
  const workspace: WorkspaceRow = { id: uid('ws'), name: 'Contract workspace', createdAt: now, updatedAt: now }
  await store.createWorkspace(workspace)
  const bot = botRow(workspace.id, now)
  const a = integrationRow(bot.id, 'chat', now)
  const b = integrationRow(bot.id, 'other', now)
  await store.createBot(bot, [a, b])
  return { workspace, bot, a, b }
}

export function newMessage(integrationId: string, conversationId: string, userId: string, now: number, payload: JsonObject = { type: 'text', text: 'hello' }, metadata: JsonObject | null = null): NewMessage {
  return { id: uid('msg'), integrationId, conversationId, userId, isBot: false, payload, metadata, now }
}

/** Resolves to the rejection reason, failing when the promise resolves. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => { throw new Error(`expected a rejection, got ${JSON.stringify(value)}`) },
    (err: unknown) => err,
  )
}

async function expectInvalidQuery(p: Promise<unknown>): Promise<void> {
  const err = await rejection(p)
  expect(err).toBeInstanceOf(ApiError)
  expect((err as ApiError).type).toBe('InvalidQuery')
  expect((err as ApiError).status).toBe(400)
}

async function expectUniqueViolation(p: Promise<unknown>, entity: string): Promise<void> {
  const err = await rejection(p)
  expect(err).toBeInstanceOf(UniqueViolation)
  expect((err as UniqueViolation).entity).toBe(entity)
}

/** Follows `next` until the end; fails on a runaway loop. */
async function collect<T>(list: (after: string | undefined) => Promise<Page<T>>, between?: (pageIndex: number) => Promise<void>): Promise<T[][]> {
  const pages: T[][] = []
  let after: string | undefined
  for (let i = 0; i < 1000; i++) {
    const page = await list(after)
    pages.push(page.items)
    if (page.next === undefined) return pages
    expect(typeof page.next).toBe('string')
    expect(page.items.length).toBeGreaterThan(0)
    after = page.next
    if (between) await between(i)
  }
  throw new Error('paging did not terminate')
}

const jsonRoundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

const seqs = (signals: SignalRecord[]) => signals.map((s) => s.seq)

/** Cursors a client could send that no list ever returned. */
const FORGED_CURSORS: string[] = [
  'not a cursor!',
  'AAAA====',
  '',
  'x'.repeat(600),
  Buffer.from('not json').toString('base64url'),
  Buffer.from('{}').toString('base64url'),
  Buffer.from('[]').toString('base64url'),
  Buffer.from('null').toString('base64url'),
  Buffer.from('["a","b","c"]').toString('base64url'),
  Buffer.from('[1.5]').toString('base64url'),
  Buffer.from('[1e400, "x"]').toString('base64url'),
  Buffer.from('["1; DROP TABLE messages", 5]').toString('base64url'),
  Buffer.from('[{"a":1}, "x"]').toString('base64url'),
  Buffer.from('[null, null]').toString('base64url'),
  Buffer.from('[true]').toString('base64url'),
  Buffer.from(JSON.stringify([2 ** 60, 'x'])).toString('base64url'),
  Buffer.from(JSON.stringify([2 ** 60])).toString('base64url'),
]

/** Byte-exact JSON documents: Unicode, escapes, key order, extreme numbers, nesting. */
function tortureDocument(): JsonObject {
  let deep: Json = { leaf: 'bottom 🌊' }
  for (let i = 0; i < 40; i++) deep = i % 2 === 0 ? { [`level${i}`]: deep } : [i, deep]
  return {
    zeta: 'last key first',
    alpha: 'ASCII',
    text: 'héllo wörld – “quotes” ‘single’ … ñ ç ø å 中文 日本語 한국어 العربية עברית हिन्दी',
    emoji: '😀👍🏽👨‍👩‍👧‍👦🏳️‍🌈🇫🇷 e\u0301 (combining) \u200b\u200d\ufeff',
    astral: '𝕏𝔸𝕄𝕃 𝄞 𠜎',
    separators: 'line\u2028para\u2029end',
    controls: 'tab\there\nnewline\rreturn\u0001\u001f\u007f\u0085',
    escapes: 'back\\slash "double" \'single\' /slash/ </script> <!-- -->',
    empty: '',
    '': 'empty key',
    'key with spaces.and.dots': 1,
    'ключ 🔑': 'unicode key',
    '10': 'numeric-looking key',
    '2': 'another numeric-looking key',
    numbers: {
      max: 1e308, min: -1e308, tiny: 5e-324, negTiny: -5e-324, maxSafe: 2 ** 53 - 1, minSafe: -(2 ** 53 - 1),
      fraction: 0.1 + 0.2, small: 1.5e-10, big: 123456789.123456789, zero: 0, negZero: -0, int: 42, neg: -7,
      maxValue: Number.MAX_VALUE, minValue: Number.MIN_VALUE, pi: Math.PI,
    },
    booleans: [true, false],
    nothing: null,
    emptyObject: {},
    emptyArray: [],
    mixed: [1, 'two', { three: [3] }, null, false, [[]], -0, 1e21, 1e-7],
    nested: deep,
    long: 'x'.repeat(50_000) + '😀',
  }
}

export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let fx: Fixture

    beforeEach(async () => {
      const made = await factory()
      store = made.store
      cleanup = made.cleanup
      fx = await seed(store)
    })

    afterEach(async () => {
      await cleanup()
    })

    const user = (integration: IntegrationRow, id = uid('user'), now = T0, over: { name?: string; isBot?: boolean } = {}) =>
      store.createUser({ integrationId: integration.id, id, now, ...over })

    /** A conversation in integration `a` owned by a fresh user. */
    const conversation = async (now = T0, id = uid('conv')) => {
      const owner = await user(fx.a)
      const conv = await store.createConversation(fx.a.id, id, owner.id, now)
      return { owner, conv }
    }

    // ------------------------------------------------------------------ basics
    describe('instance', () => {
      it('ping resolves and dialect is declared', async () => {
        await expect(store.ping()).resolves.toBeUndefined()
        expect(['sqlite', 'postgres']).toContain(store.dialect)
      })

      it('withLock: callers of one name never overlap, a failure releases the lock, other names are independent', async () => {
        const name = uid('lock')
        let inside = 0
        let most = 0
        const critical = async (i: number) => {
          inside++
          most = Math.max(most, inside)
          await new Promise((r) => setTimeout(r, 15))
          inside--
          if (i === 1) throw new Error('boom')
          return i
        }
        const results = await Promise.allSettled([0, 1, 2, 3].map((i) => store.withLock(name, () => critical(i))))
        expect(most).toBe(1)
        expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([0, 'boom', 2, 3])
        // Another name does not wait for this one.
        let release!: () => void
        const held = store.withLock(name, () => new Promise<void>((r) => (release = r)))
        await expect(store.withLock(uid('other'), async () => 'free')).resolves.toBe('free')
        release()
        await held
      })

      it('countWorkspaces counts created workspaces and forgets deleted ones', async () => {
        const before = await store.countWorkspaces()
        expect(before).toBeGreaterThanOrEqual(1) // the fixture's
        const w1: WorkspaceRow = { id: uid('ws'), name: 'one', createdAt: T0, updatedAt: T0 }
        const w2: WorkspaceRow = { id: uid('ws'), name: 'two', createdAt: T0 + 1, updatedAt: T0 + 1 }
        await store.createWorkspace(w1)
        await store.createWorkspace(w2)
        expect(await store.countWorkspaces()).toBe(before + 2)
        expect(await store.getWorkspace(w1.id)).toEqual(w1)
        expect(await store.deleteWorkspace(w1.id)).toBe(true)
        expect(await store.deleteWorkspace(w1.id)).toBe(false)
        expect(await store.countWorkspaces()).toBe(before + 1)
      })

      it('finds access tokens by hash only', async () => {
        const account = { id: uid('acc'), email: `${uid('mail')}@example.com`, displayName: 'Ada', createdAt: T0, updatedAt: T0 }
        await store.createAccount(account)
        const token = { id: uid('tok'), accountId: account.id, note: 'note ✓', createdAt: T0 + 5 }
        const hash = uid('hash')
        await store.createAccessToken({ ...token, tokenHash: hash })
        const found = await store.findAccessTokenByHash(hash)
        expect(found).toEqual(token)
        expect(found).not.toHaveProperty('tokenHash')
        expect(await store.findAccessTokenByHash(uid('hash'))).toBeUndefined()
        expect(await store.findAccessTokenByHash(token.id)).toBeUndefined()
        expect(await store.findAccessTokenByHash('')).toBeUndefined()
      })

      it('getOrCreateSetting: concurrent first calls all get the winner’s value', async () => {
        const key = uid('setting')
        const values = await Promise.all(Array.from({ length: 20 }, (_, i) => store.getOrCreateSetting(key, () => `value-${i}`)))
        expect(new Set(values).size).toBe(1)
        expect(await store.getOrCreateSetting(key, () => 'later')).toBe(values[0])
      })
    })

    // ------------------------------------------------------------------ bots, integrations
    describe('bots and integrations', () => {
      it('createBot stores the bot and its integrations; listIntegrations returns them', async () => {
        const bot = botRow(fx.workspace.id, T0 + 10, { name: 'Bot ✨', description: 'déscription', tags: { env: 'prod', 'ключ': 'значение 🔑' }, dev: true, code: 'export {}', deployedAt: T0 + 11 })
        const chat = integrationRow(bot.id, 'chat', T0 + 10, { configuration: { nested: { list: [1, 'two', null] }, flag: true } })
        const other = integrationRow(bot.id, 'webchat', T0 + 10, { enabled: false })
        await store.createBot(bot, [chat, other])
        expect(await store.getBot(bot.id)).toEqual(bot)
        const listed = await store.listIntegrations(bot.id)
        expect([...listed].sort((x, y) => x.id.localeCompare(y.id))).toEqual([chat, other].sort((x, y) => x.id.localeCompare(y.id)))
        expect(await store.listIntegrations(uid('bot'))).toEqual([])
      })

      it('createBot with no integrations', async () => {
        const bot = botRow(fx.workspace.id)
        await store.createBot(bot, [])
        expect(await store.getBot(bot.id)).toEqual(bot)
        expect(await store.listIntegrations(bot.id)).toEqual([])
      })

      it('getIntegrationByWebhookId finds exactly that integration', async () => {
        expect(await store.getIntegrationByWebhookId(fx.a.webhookId)).toEqual(fx.a)
        expect(await store.getIntegrationByWebhookId(fx.b.webhookId)).toEqual(fx.b)
        expect(await store.getIntegrationByWebhookId(uid('wh'))).toBeUndefined()
        expect(await store.getIntegrationByWebhookId(fx.a.id)).toBeUndefined()
        expect(await store.getIntegrationByWebhookId('')).toBeUndefined()
      })

      it('createBot is atomic: a failing integration leaves no bot behind', async () => {
        const bot = botRow(fx.workspace.id)
        const ok = integrationRow(bot.id, 'chat')
        const clash = integrationRow(bot.id, 'webchat', T0, { webhookId: fx.a.webhookId })
        await expect(store.createBot(bot, [ok, clash])).rejects.toBeDefined()
        expect(await store.getBot(bot.id)).toBeUndefined()
        expect(await store.listIntegrations(bot.id)).toEqual([])
        expect(await store.getIntegrationByWebhookId(ok.webhookId)).toBeUndefined()
        expect(await store.getIntegrationByWebhookId(fx.a.webhookId)).toEqual(fx.a)
      })
    })

    // ------------------------------------------------------------------ admin: accounts, workspaces, members
    describe('accounts, workspaces and members', () => {
      const account = (over: { createdAt?: number } = {}) => {
        const row = { id: uid('acc'), email: `${uid('mail')}@example.com`, displayName: 'Ada 👩‍💻', createdAt: over.createdAt ?? T0, updatedAt: over.createdAt ?? T0 }
        return store.createAccount(row).then(() => row)
      }

      it('accounts are found by id and by email; emails are unique', async () => {
        const a = await account()
        expect(await store.getAccount(a.id)).toEqual(a)
        expect(await store.getAccountByEmail(a.email)).toEqual(a)
        expect(await store.getAccount(uid('acc'))).toBeUndefined()
        expect(await store.getAccountByEmail(`${uid('nobody')}@example.com`)).toBeUndefined()
        await expect(store.createAccount({ ...a, id: uid('acc') })).rejects.toBeDefined()
        await expect(store.createAccount({ ...a, email: `${uid('mail')}@example.com` })).rejects.toBeDefined()
      })

      it('createMemberAccount: account, first token and membership together; a taken email inserts nothing (UniqueViolation)', async () => {
        const a = { id: uid('acc'), email: `${uid('mail')}@example.com`, displayName: 'New', createdAt: T0, updatedAt: T0 }
        const token = { id: uid('tok'), accountId: a.id, note: 'first', createdAt: T0 }
        const hash = uid('hash')
        await store.createMemberAccount(a, { ...token, tokenHash: hash }, fx.workspace.id, 'viewer')
        expect(await store.getAccountByEmail(a.email)).toEqual(a)
        expect(await store.findAccessTokenByHash(hash)).toEqual(token)
        expect((await store.getMember(fx.workspace.id, a.id))?.role).toBe('viewer')
        const twin = { ...a, id: uid('acc') }
        const twinHash = uid('hash')
        await expect(store.createMemberAccount(twin, { ...token, id: uid('tok'), accountId: twin.id, tokenHash: twinHash }, fx.workspace.id, 'owner')).rejects.toBeInstanceOf(UniqueViolation)
        expect(await store.getAccount(twin.id)).toBeUndefined()
        expect(await store.findAccessTokenByHash(twinHash)).toBeUndefined()
        await expect(store.addWorkspaceMember(fx.workspace.id, a.id, 'owner', T0)).rejects.toBeInstanceOf(UniqueViolation)
        expect((await store.getMember(fx.workspace.id, a.id))?.role).toBe('viewer')
      })

      it('access tokens: list per account, delete only by their account', async () => {
        const a = await account()
        const b = await account()
        const t1 = { id: uid('tok'), accountId: a.id, note: 'one', createdAt: T0 + 2 }
        const t2 = { id: uid('tok'), accountId: a.id, note: 'two', createdAt: T0 + 1 }
        const tb = { id: uid('tok'), accountId: b.id, note: 'b', createdAt: T0 }
        const h1 = uid('hash')
        await store.createAccessToken({ ...t1, tokenHash: h1 })
        await store.createAccessToken({ ...t2, tokenHash: uid('hash') })
        await store.createAccessToken({ ...tb, tokenHash: uid('hash') })
        await expect(store.createAccessToken({ ...t1, id: uid('tok'), tokenHash: h1 })).rejects.toBeDefined()
        const listed = await store.listAccessTokens(a.id)
        expect(listed).toEqual([t2, t1])
        for (const t of listed) expect(t).not.toHaveProperty('tokenHash')
        expect(await store.deleteAccessToken(b.id, t1.id)).toBe(false)
        expect(await store.deleteAccessToken(a.id, t1.id)).toBe(true)
        expect(await store.deleteAccessToken(a.id, t1.id)).toBe(false)
        expect(await store.findAccessTokenByHash(h1)).toBeUndefined()
        expect(await store.listAccessTokens(a.id)).toEqual([t2])
        expect(await store.listAccessTokens(b.id)).toEqual([tb])
      })

      it('updateWorkspace renames; missing → undefined', async () => {
        const updated = await store.updateWorkspace(fx.workspace.id, 'Renamed ✓', T0 + 9)
        expect(updated).toEqual({ ...fx.workspace, name: 'Renamed ✓', updatedAt: T0 + 9 })
        expect(await store.getWorkspace(fx.workspace.id)).toEqual(updated)
        expect(await store.updateWorkspace(uid('ws'), 'x', T0)).toBeUndefined()
        expect(await store.getWorkspace(uid('ws'))).toBeUndefined()
      })

      it('members: add, get, change role, remove', async () => {
        const a = await account()
        await store.addWorkspaceMember(fx.workspace.id, a.id, 'owner', T0 + 1)
        const m = await store.getMember(fx.workspace.id, a.id)
        expect(m).toEqual({ workspaceId: fx.workspace.id, account: a, role: 'owner', createdAt: T0 + 1, updatedAt: T0 + 1 })
        await expect(store.addWorkspaceMember(fx.workspace.id, a.id, 'viewer', T0 + 2)).rejects.toBeDefined()
        const changed = await store.updateMemberRole(fx.workspace.id, a.id, 'viewer', T0 + 3)
        expect(changed).toEqual({ ...m, role: 'viewer', updatedAt: T0 + 3 })
        expect(await store.updateMemberRole(fx.workspace.id, uid('acc'), 'viewer', T0)).toBeUndefined()
        expect(await store.getMember(uid('ws'), a.id)).toBeUndefined()
        expect(await store.removeMember(fx.workspace.id, a.id)).toBe(true)
        expect(await store.removeMember(fx.workspace.id, a.id)).toBe(false)
        expect(await store.getMember(fx.workspace.id, a.id)).toBeUndefined()
        expect(await store.getAccount(a.id)).toEqual(a)
      })

      it('listMembers and listWorkspacesOf page without skipping or repeating', async () => {
        const me = await account()
        const accounts = []
        for (let i = 0; i < 7; i++) {
          const a = await account()
          await store.addWorkspaceMember(fx.workspace.id, a.id, 'viewer', T0 + Math.floor(i / 2))
          accounts.push(a)
        }
        const members = (await collect((after) => store.listMembers(fx.workspace.id, { after, limit: 3 }))).flat()
        expect(members.map((m) => m.account.id).sort()).toEqual(accounts.map((a) => a.id).sort())
        for (let i = 1; i < members.length; i++) expect(members[i]!.createdAt).toBeGreaterThanOrEqual(members[i - 1]!.createdAt)

        const workspaces: WorkspaceRow[] = []
        for (let i = 0; i < 8; i++) {
          const w: WorkspaceRow = { id: uid('ws'), name: `w${i}`, createdAt: T0 + Math.floor(i / 3), updatedAt: T0 }
          await store.createWorkspace(w)
          if (i !== 5) await store.addWorkspaceMember(w.id, me.id, 'owner', T0)
          if (i !== 5) workspaces.push(w)
        }
        const pages = await collect((after) => store.listWorkspacesOf(me.id, { after, limit: 3 }))
        expect(pages.map((p) => p.length)).toEqual([3, 3, 1])
        const mine = pages.flat()
        expect(mine.map((w) => w.id).sort()).toEqual(workspaces.map((w) => w.id).sort())
        expect(await store.listWorkspacesOf(uid('acc'), { limit: 5 })).toEqual({ items: [] })
      })

      it('deleting a workspace deletes its bots', async () => {
        expect(await store.countBots(fx.workspace.id)).toBe(1)
        expect(await store.deleteWorkspace(fx.workspace.id)).toBe(true)
        expect(await store.getWorkspace(fx.workspace.id)).toBeUndefined()
        expect(await store.getBot(fx.bot.id)).toBeUndefined()
        expect(await store.getIntegrationByWebhookId(fx.a.webhookId)).toBeUndefined()
        expect(await store.countBots(fx.workspace.id)).toBe(0)
      })
    })

    // ------------------------------------------------------------------ admin: bots
    describe('bots: list, update, delete, api keys', () => {
      it('countBots counts per workspace', async () => {
        expect(await store.countBots(fx.workspace.id)).toBe(1)
        await store.createBot(botRow(fx.workspace.id), [])
        expect(await store.countBots(fx.workspace.id)).toBe(2)
        expect(await store.countBots(uid('ws'))).toBe(0)
      })

      it('listBots filters by dev, tags and enabled integration names, sorts, and pages', async () => {
        const ws: WorkspaceRow = { id: uid('ws'), name: 'bots', createdAt: T0, updatedAt: T0 }
        await store.createWorkspace(ws)
        const bots: BotRow[] = []
        for (let i = 0; i < 9; i++) {
          const bot = botRow(ws.id, T0 + Math.floor(i / 2), { name: `b${i}`, dev: i % 3 === 0, tags: i % 2 ? { team: 'red', n: String(i) } : { team: 'blue' }, updatedAt: T0 + 100 - i })
          const integrations = i % 4 === 0 ? [integrationRow(bot.id, 'chat', T0)] : i % 4 === 1 ? [integrationRow(bot.id, 'chat', T0, { enabled: false })] : []
          await store.createBot(bot, integrations)
          bots.push(bot)
        }
        const all = async (filter: Partial<Parameters<Store['listBots']>[0]>, limit = 2) =>
          (await collect((after) => store.listBots({ workspaceId: ws.id, sortField: 'createdAt', sortDirection: 'asc', ...filter }, { after, limit }))).flat()
        const ids = (rows: BotRow[]) => rows.map((b) => b.id)
        const sortedIds = (rows: BotRow[]) => ids(rows).sort()

        const asc = await all({})
        expect(sortedIds(asc)).toEqual(sortedIds(bots))
        for (let i = 1; i < asc.length; i++) expect(asc[i]!.createdAt).toBeGreaterThanOrEqual(asc[i - 1]!.createdAt)
        const desc = await all({ sortDirection: 'desc' }, 4)
        expect(ids(desc)).toEqual(ids(asc).reverse())
        const byUpdated = await all({ sortField: 'updatedAt', sortDirection: 'asc' }, 3)
        expect(ids(byUpdated)).toEqual(ids([...bots].reverse()))
        expect(sortedIds(await all({ dev: true }))).toEqual(sortedIds(bots.filter((b) => b.dev)))
        expect(sortedIds(await all({ dev: false }))).toEqual(sortedIds(bots.filter((b) => !b.dev)))
        expect(sortedIds(await all({ tags: { team: 'red' } }))).toEqual(sortedIds(bots.filter((b) => b.tags.team === 'red')))
        expect(sortedIds(await all({ tags: { team: 'red', n: '3' } }))).toEqual([bots[3]!.id])
        expect(await all({ tags: { team: 'green' } })).toEqual([])
        expect(sortedIds(await all({ integrationNames: ['chat'] }))).toEqual(sortedIds(bots.filter((_, i) => i % 4 === 0)))
        expect(sortedIds(await all({ integrationNames: ['chat'], dev: true }))).toEqual(sortedIds(bots.filter((b, i) => i % 4 === 0 && b.dev)))
        // other workspaces never leak in
        expect(ids(await all({}))).not.toContain(fx.bot.id)
      })

      it('updateBot patches fields and tags; null removes a tag', async () => {
        const bot = botRow(fx.workspace.id, T0, { tags: { keep: '1', drop: '2' } })
        await store.createBot(bot, [])
        const updated = await store.updateBot(bot.id, { name: 'New', description: 'd', dev: true, code: 'code', deployedAt: T0 + 5, tags: { drop: null, add: '3', keep: '1b' } }, T0 + 6)
        expect(updated).toEqual({ ...bot, name: 'New', description: 'd', dev: true, code: 'code', deployedAt: T0 + 5, tags: { keep: '1b', add: '3' }, updatedAt: T0 + 6 })
        expect(await store.getBot(bot.id)).toEqual(updated)
        const filter = { workspaceId: fx.workspace.id, sortField: 'createdAt' as const, sortDirection: 'asc' as const }
        expect((await store.listBots({ ...filter, tags: { drop: '2' } }, { limit: 10 })).items).toEqual([])
        expect((await store.listBots({ ...filter, tags: { keep: '1b' } }, { limit: 10 })).items.map((b) => b.id)).toEqual([bot.id])
        const cleared = await store.updateBot(bot.id, { description: null }, T0 + 7)
        expect(cleared!.description).toBeNull()
        expect(cleared!.name).toBe('New')
        expect(await store.updateBot(uid('bot'), { name: 'x' }, T0)).toBeUndefined()
      })

      it('a bot\'s url (remote bots) is stored on create, changed and cleared by updateBot, left alone by other patches', async () => {
        const bot = botRow(fx.workspace.id, T0, { url: 'https://bots.example.com/a' })
        await store.createBot(bot, [])
        expect((await store.getBot(bot.id))!.url).toBe('https://bots.example.com/a')
        expect((await store.updateBot(bot.id, { name: 'renamed' }, T0 + 1))!.url).toBe('https://bots.example.com/a')
        expect((await store.updateBot(bot.id, { url: 'http://127.0.0.1:9/b' }, T0 + 2))!.url).toBe('http://127.0.0.1:9/b')
        expect((await store.updateBot(bot.id, { url: null }, T0 + 3))!.url).toBeNull()
        expect((await store.getBot(bot.id))!.url).toBeNull()
      })

      it('a bot\'s webchat configuration is stored on create, replaced and cleared by updateBot, left alone by other patches', async () => {
        const bot = botRow(fx.workspace.id, T0, { webchat: { botName: 'Ada', radius: 4 } })
        await store.createBot(bot, [])
        expect((await store.getBot(bot.id))!.webchat).toEqual({ botName: 'Ada', radius: 4 })
        expect((await store.updateBot(bot.id, { name: 'renamed' }, T0 + 1))!.webchat).toEqual({ botName: 'Ada', radius: 4 })
        expect((await store.updateBot(bot.id, { webchat: { primaryColor: '#0a7' } }, T0 + 2))!.webchat).toEqual({ primaryColor: '#0a7' })
        expect((await store.updateBot(bot.id, { webchat: null }, T0 + 3))!.webchat).toBeNull()
        expect((await store.getBot(bot.id))!.webchat).toBeNull()
      })

      it('deleteBot removes the bot, its integrations and keys', async () => {
        const hash = uid('hash')
        await store.createBotApiKey({ id: uid('key'), botId: fx.bot.id, note: 'n', createdAt: T0, tokenHash: hash })
        expect(await store.deleteBot(fx.bot.id)).toEqual({ webhookBlobNames: [] })
        expect(await store.deleteBot(fx.bot.id)).toBeUndefined()
        expect(await store.getBot(fx.bot.id)).toBeUndefined()
        expect(await store.listIntegrations(fx.bot.id)).toEqual([])
        expect(await store.getIntegrationByWebhookId(fx.a.webhookId)).toBeUndefined()
        expect(await store.findBotApiKeyByHash(hash)).toBeUndefined()
      })

      it('createIntegration and updateIntegration', async () => {
        const i = integrationRow(fx.bot.id, 'webchat', T0 + 1, { configuration: { a: 1 } })
        await store.createIntegration(i)
        expect(await store.getIntegrationByWebhookId(i.webhookId)).toEqual(i)
        await expect(store.createIntegration({ ...i, id: uid('int'), webhookId: uid('wh') })).rejects.toBeDefined() // same bot and name
        await store.updateIntegration(i.id, { enabled: false, encryptionKey: 'new-key', configuration: { b: [2] } }, T0 + 2)
        expect(await store.getIntegrationByWebhookId(i.webhookId)).toEqual({ ...i, enabled: false, encryptionKey: 'new-key', configuration: { b: [2] }, updatedAt: T0 + 2 })
        await store.updateIntegration(i.id, { enabled: true }, T0 + 3)
        expect(await store.getIntegrationByWebhookId(i.webhookId)).toEqual({ ...i, enabled: true, encryptionKey: 'new-key', configuration: { b: [2] }, updatedAt: T0 + 3 })
        await expect(store.updateIntegration(uid('int'), { enabled: true }, T0)).resolves.toBeUndefined()
      })

      it('bot API keys: create, list, find by hash, get, delete per bot', async () => {
        const other = botRow(fx.workspace.id)
        await store.createBot(other, [])
        const k1 = { id: uid('key'), botId: fx.bot.id, note: 'first', createdAt: T0 + 1 }
        const k2 = { id: uid('key'), botId: fx.bot.id, note: 'second', createdAt: T0 }
        const h1 = uid('hash')
        await store.createBotApiKey({ ...k1, tokenHash: h1 })
        await store.createBotApiKey({ ...k2, tokenHash: uid('hash') })
        expect(await store.listBotApiKeys(fx.bot.id)).toEqual([k2, k1])
        expect(await store.listBotApiKeys(other.id)).toEqual([])
        expect(await store.findBotApiKeyByHash(h1)).toEqual(k1)
        expect(await store.findBotApiKeyByHash(uid('hash'))).toBeUndefined()
        expect(await store.getBotApiKey(k1.id)).toEqual(k1)
        expect(await store.getBotApiKey(uid('key'))).toBeUndefined()
        expect(await store.deleteBotApiKey(other.id, k1.id)).toBe(false)
        expect(await store.deleteBotApiKey(fx.bot.id, k1.id)).toBe(true)
        expect(await store.deleteBotApiKey(fx.bot.id, k1.id)).toBe(false)
        expect(await store.findBotApiKeyByHash(h1)).toBeUndefined()
        expect(await store.listBotApiKeys(fx.bot.id)).toEqual([k2])
      })
    })

    // ------------------------------------------------------------------ users and keys
    describe('users', () => {
      it('createUser returns the stored row with defaults', async () => {
        const u = await store.createUser({ integrationId: fx.a.id, id: 'user-1', now: T0 + 3 })
        expect(u).toMatchObject({ integrationId: fx.a.id, id: 'user-1', name: null, pictureUrl: null, profile: null, isBot: false, createdAt: T0 + 3, updatedAt: T0 + 3 })
        expect(await store.getUser(fx.a.id, 'user-1')).toEqual(u)
        const full = await store.createUser({ integrationId: fx.a.id, id: 'user-2', name: 'Zoë 🦊', pictureUrl: 'https://x.test/p.png', profile: '{"a":1}', isBot: true, now: T0 })
        expect(full).toMatchObject({ name: 'Zoë 🦊', pictureUrl: 'https://x.test/p.png', profile: '{"a":1}', isBot: true })
        expect(await store.getUser(fx.a.id, 'user-2')).toEqual(full)
      })

      it('duplicate user id in one integration → UniqueViolation, and the original is untouched', async () => {
        const first = await user(fx.a, 'dup', T0, { name: 'first' })
        await expectUniqueViolation(user(fx.a, 'dup', T0 + 1, { name: 'second' }), 'User')
        expect(await store.getUser(fx.a.id, 'dup')).toEqual(first)
      })

      it('getOrCreateUser tells whether it created the user and never overwrites', async () => {
        const first = await store.getOrCreateUser({ integrationId: fx.a.id, id: 'goc', name: 'one', now: T0 })
        expect(first.created).toBe(true)
        expect(first.user).toMatchObject({ integrationId: fx.a.id, id: 'goc', name: 'one', createdAt: T0 })
        const second = await store.getOrCreateUser({ integrationId: fx.a.id, id: 'goc', name: 'two', now: T0 + 100 })
        expect(second.created).toBe(false)
        expect(second.user).toEqual(first.user)
        // created explicitly beforehand
        const existing = await user(fx.a, 'pre', T0, { name: 'pre' })
        expect(await store.getOrCreateUser({ integrationId: fx.a.id, id: 'pre', now: T0 + 1 })).toEqual({ user: existing, created: false })
      })

      it('concurrent getOrCreateUser calls create the user exactly once', async () => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.getOrCreateUser({ integrationId: fx.a.id, id: 'racer', name: `n${i}`, now: T0 + i })),
        )
        expect(results.filter((r) => r.created)).toHaveLength(1)
        const winner = results.find((r) => r.created)!.user
        for (const r of results) expect(r.user).toEqual(winner)
      })

      it('users are scoped per integration: the same id in two integrations is two users', async () => {
        const ua = await user(fx.a, 'same', T0, { name: 'in A' })
        const ub = await user(fx.b, 'same', T0 + 1, { name: 'in B' })
        expect(ua.integrationId).toBe(fx.a.id)
        expect(ub.integrationId).toBe(fx.b.id)
        expect(await store.getUser(fx.a.id, 'same')).toEqual(ua)
        expect(await store.getUser(fx.b.id, 'same')).toEqual(ub)
        expect(await store.getOrCreateUser({ integrationId: fx.b.id, id: 'same', now: T0 })).toEqual({ user: ub, created: false })
        expect(await store.deleteUser(fx.a.id, 'same')).toBe(true)
        expect(await store.getUser(fx.a.id, 'same')).toBeUndefined()
        expect(await store.getUser(fx.b.id, 'same')).toEqual(ub)
        expect(await store.getUser(uid('int'), 'same')).toBeUndefined()
      })

      it('updateUser patches only the given fields', async () => {
        await store.createUser({ integrationId: fx.a.id, id: 'upd', name: 'old', pictureUrl: 'p', profile: 'prof', now: T0 })
        const updated = await store.updateUser(fx.a.id, 'upd', { name: 'new' }, T0 + 50)
        expect(updated).toMatchObject({ id: 'upd', name: 'new', pictureUrl: 'p', profile: 'prof', createdAt: T0, updatedAt: T0 + 50 })
        expect(await store.getUser(fx.a.id, 'upd')).toEqual(updated)
        expect(await store.updateUser(fx.a.id, 'missing', { name: 'x' }, T0)).toBeUndefined()
        expect(await store.updateUser(fx.b.id, 'upd', { name: 'x' }, T0)).toBeUndefined()
        expect((await store.getUser(fx.a.id, 'upd'))!.name).toBe('new')
      })

      it('user keys are found by hash, only within their integration', async () => {
        const ua = await user(fx.a, 'keyed')
        const ub = await user(fx.b, 'keyed')
        const hashA = uid('hash')
        const hashB = uid('hash')
        await store.addUserKey(fx.a.id, ua.id, hashA, T0)
        await store.addUserKey(fx.b.id, ub.id, hashB, T0)
        expect(await store.findUserByKeyHash(fx.a.id, hashA)).toEqual(ua)
        expect(await store.findUserByKeyHash(fx.b.id, hashB)).toEqual(ub)
        // a key of one integration never finds a user in another, even one with the same id
        expect(await store.findUserByKeyHash(fx.b.id, hashA)).toBeUndefined()
        expect(await store.findUserByKeyHash(fx.a.id, hashB)).toBeUndefined()
        expect(await store.findUserByKeyHash(fx.a.id, uid('hash'))).toBeUndefined()
        expect(await store.findUserByKeyHash(fx.a.id, ua.id)).toBeUndefined()
        // several keys for one user
        const hashA2 = uid('hash')
        await store.addUserKey(fx.a.id, ua.id, hashA2, T0 + 1)
        expect(await store.findUserByKeyHash(fx.a.id, hashA2)).toEqual(ua)
        expect(await store.findUserByKeyHash(fx.a.id, hashA)).toEqual(ua)
      })

      it('deleteUser cascades to keys and participations', async () => {
        const owner = await user(fx.a, 'owner')
        const victim = await user(fx.a, 'victim')
        const hash = uid('hash')
        await store.addUserKey(fx.a.id, victim.id, hash, T0)
        const c1 = await store.createConversation(fx.a.id, uid('conv'), owner.id, T0)
        const c2 = await store.createConversation(fx.a.id, uid('conv'), victim.id, T0 + 1)
        expect(await store.addParticipant(fx.a.id, c1.id, victim.id, T0 + 2)).toBe(true)

        expect(await store.deleteUser(fx.a.id, victim.id)).toBe(true)
        expect(await store.deleteUser(fx.a.id, victim.id)).toBe(false)
        expect(await store.getUser(fx.a.id, victim.id)).toBeUndefined()
        expect(await store.findUserByKeyHash(fx.a.id, hash)).toBeUndefined()
        expect(await store.isParticipant(fx.a.id, c1.id, victim.id)).toBe(false)
        expect(await store.isParticipant(fx.a.id, c2.id, victim.id)).toBe(false)
        expect(await store.getParticipant(fx.a.id, c1.id, victim.id)).toBeUndefined()
        expect((await store.listParticipants(fx.a.id, c1.id, { limit: 50 })).items.map((u) => u.id)).toEqual([owner.id])
        expect((await store.listParticipants(fx.a.id, c2.id, { limit: 50 })).items).toEqual([])
        expect((await store.listConversationsOf(fx.a.id, victim.id, { limit: 50 })).items).toEqual([])
        // the owner and their conversation are unaffected
        expect(await store.isParticipant(fx.a.id, c1.id, owner.id)).toBe(true)
        expect(await store.getConversation(fx.a.id, c1.id)).toBeDefined()

        // a re-created user with the same id starts without keys or participations
        await user(fx.a, victim.id)
        expect(await store.findUserByKeyHash(fx.a.id, hash)).toBeUndefined()
        expect(await store.isParticipant(fx.a.id, c1.id, victim.id)).toBe(false)
      })

      it('deleteUser of a missing user → false', async () => {
        expect(await store.deleteUser(fx.a.id, 'nobody')).toBe(false)
        await user(fx.b, 'only-in-b')
        expect(await store.deleteUser(fx.a.id, 'only-in-b')).toBe(false)
        expect(await store.getUser(fx.b.id, 'only-in-b')).toBeDefined()
      })
    })

    // ------------------------------------------------------------------ conversations
    describe('conversations', () => {
      it('createConversation returns the row and adds the owner as participant', async () => {
        const owner = await user(fx.a, 'owner')
        const conv = await store.createConversation(fx.a.id, 'conv-1', owner.id, T0 + 7)
        expect(conv).toMatchObject({ integrationId: fx.a.id, id: 'conv-1', ownerId: owner.id, lastSeq: 0, createdAt: T0 + 7, updatedAt: T0 + 7 })
        expect(await store.getConversation(fx.a.id, 'conv-1')).toEqual(conv)
        expect(await store.isParticipant(fx.a.id, 'conv-1', owner.id)).toBe(true)
        expect(await store.getParticipant(fx.a.id, 'conv-1', owner.id)).toEqual(owner)
        expect(await store.listParticipants(fx.a.id, 'conv-1', { limit: 10 })).toEqual({ items: [owner] })
        expect((await store.listConversationsOf(fx.a.id, owner.id, { limit: 10 })).items).toEqual([conv])
        // joining as owner is not a signal
        expect(await store.signalsSince(fx.a.id, 'conv-1', 0, 100)).toEqual([])
      })

      it('duplicate conversation id → UniqueViolation and nothing changes', async () => {
        const owner = await user(fx.a)
        const intruder = await user(fx.a)
        const conv = await store.createConversation(fx.a.id, 'dup-conv', owner.id, T0)
        await expectUniqueViolation(store.createConversation(fx.a.id, 'dup-conv', intruder.id, T0 + 1), 'Conversation')
        expect(await store.getConversation(fx.a.id, 'dup-conv')).toEqual(conv)
        expect(await store.isParticipant(fx.a.id, 'dup-conv', intruder.id)).toBe(false)
        expect((await store.listParticipants(fx.a.id, 'dup-conv', { limit: 10 })).items).toEqual([owner])
      })

      it('conversations are scoped per integration', async () => {
        const ua = await user(fx.a, 'u')
        const ub = await user(fx.b, 'u')
        const ca = await store.createConversation(fx.a.id, 'shared-id', ua.id, T0)
        const cb = await store.createConversation(fx.b.id, 'shared-id', ub.id, T0 + 1)
        expect(await store.getConversation(fx.a.id, 'shared-id')).toEqual(ca)
        expect(await store.getConversation(fx.b.id, 'shared-id')).toEqual(cb)
        const m = await store.appendMessage(newMessage(fx.a.id, 'shared-id', ua.id, T0 + 2))
        expect(m!.seq).toBe(1)
        expect(await store.getMessage(fx.b.id, m!.id)).toBeUndefined()
        expect((await store.listMessages(fx.b.id, 'shared-id', { limit: 10 })).items).toEqual([])
        expect(await store.signalsSince(fx.b.id, 'shared-id', 0, 10)).toEqual([])
        expect((await store.getConversation(fx.b.id, 'shared-id'))!.lastSeq).toBe(0)
        expect(await store.deleteConversation(fx.b.id, 'shared-id')).toBe(true)
        expect(await store.getConversation(fx.a.id, 'shared-id')).toMatchObject({ id: 'shared-id', lastSeq: 1 })
        expect(await store.getMessage(fx.a.id, m!.id)).toBeDefined()
      })

      it('getConversation of a missing conversation → undefined', async () => {
        expect(await store.getConversation(fx.a.id, 'nope')).toBeUndefined()
        const { conv } = await conversation()
        expect(await store.getConversation(fx.b.id, conv.id)).toBeUndefined()
      })

      it('lastSeq follows every signal', async () => {
        const { owner, conv } = await conversation()
        const other = await user(fx.a)
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: {}, now: T0 })
        await store.addParticipant(fx.a.id, conv.id, other.id, T0)
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(3)
      })

      it('signalSeqBefore: the last signal written before a time, across messages, events and participant signals', async () => {
        const { owner, conv } = await conversation()
        const other = await user(fx.a)
        expect(await store.signalSeqBefore(fx.a.id, conv.id, T0 + 100)).toBe(0)
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 1))
        await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: {}, now: T0 + 2 })
        await store.addParticipant(fx.a.id, conv.id, other.id, T0 + 3)
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 4))
        const at = (before: number) => store.signalSeqBefore(fx.a.id, conv.id, before)
        expect(await Promise.all([at(T0), at(T0 + 1), at(T0 + 2), at(T0 + 3), at(T0 + 4), at(T0 + 5)])).toEqual([0, 0, 1, 2, 3, 4])
        // another integration's conversation of the same id, and a missing conversation
        expect(await store.signalSeqBefore(fx.b.id, conv.id, T0 + 100)).toBe(0)
        expect(await store.signalSeqBefore(fx.a.id, 'nope', T0 + 100)).toBe(0)
      })

      it('deleteConversation cascades messages, events, participants and signals', async () => {
        const { owner, conv } = await conversation()
        const guest = await user(fx.a)
        const leaver = await user(fx.a)
        const m1 = await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 1))
        const m2 = await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 2))
        const e1 = await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { k: 1 }, now: T0 + 3 })
        await store.addParticipant(fx.a.id, conv.id, guest.id, T0 + 4)
        await store.addParticipant(fx.a.id, conv.id, leaver.id, T0 + 5)
        await store.removeParticipant(fx.a.id, conv.id, leaver.id, T0 + 6)
        await store.deleteMessage(fx.a.id, m2!.id, T0 + 7)
        // an untouched neighbour
        const { owner: nOwner, conv: neighbour } = await conversation()
        const nm = await store.appendMessage(newMessage(fx.a.id, neighbour.id, nOwner.id, T0))

        expect(await store.deleteConversation(fx.a.id, conv.id)).toBe(true)
        expect(await store.deleteConversation(fx.a.id, conv.id)).toBe(false)
        expect(await store.getConversation(fx.a.id, conv.id)).toBeUndefined()
        expect(await store.getMessage(fx.a.id, m1!.id)).toBeUndefined()
        expect(await store.getEvent(fx.a.id, e1!.id)).toBeUndefined()
        expect(await store.isParticipant(fx.a.id, conv.id, owner.id)).toBe(false)
        expect(await store.isParticipant(fx.a.id, conv.id, guest.id)).toBe(false)
        expect((await store.listParticipants(fx.a.id, conv.id, { limit: 10 })).items).toEqual([])
        expect((await store.listMessages(fx.a.id, conv.id, { limit: 10 })).items).toEqual([])
        expect(await store.signalsSince(fx.a.id, conv.id, 0, 100)).toEqual([])
        expect((await store.listConversationsOf(fx.a.id, owner.id, { limit: 10 })).items).toEqual([])
        expect((await store.listConversationsOf(fx.a.id, guest.id, { limit: 10 })).items).toEqual([])
        // users survive their conversation
        expect(await store.getUser(fx.a.id, guest.id)).toBeDefined()
        // the neighbour is untouched
        expect(await store.getMessage(fx.a.id, nm!.id)).toEqual(nm)

        // re-creating the id starts from scratch: no stale rows collide with new sequence numbers
        const again = await store.createConversation(fx.a.id, conv.id, guest.id, T0 + 100)
        expect(again.lastSeq).toBe(0)
        expect((await store.listParticipants(fx.a.id, conv.id, { limit: 10 })).items.map((u) => u.id)).toEqual([guest.id])
        const fresh = await store.appendMessage(newMessage(fx.a.id, conv.id, guest.id, T0 + 101))
        expect(fresh!.seq).toBe(1)
        expect(seqs(await store.signalsSince(fx.a.id, conv.id, 0, 100))).toEqual([1])
        for (let i = 0; i < 8; i++) await store.appendMessage(newMessage(fx.a.id, conv.id, guest.id, T0 + 102))
        expect(seqs(await store.signalsSince(fx.a.id, conv.id, 0, 100))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
      })

      it('deleteConversation of a missing conversation → false', async () => {
        expect(await store.deleteConversation(fx.a.id, 'nope')).toBe(false)
        const { conv } = await conversation()
        expect(await store.deleteConversation(fx.b.id, conv.id)).toBe(false)
        expect(await store.getConversation(fx.a.id, conv.id)).toEqual(conv)
      })
    })

    // ------------------------------------------------------------------ participants
    describe('participants', () => {
      it('add/removeParticipant return false when nothing changes and record signals with the next seq', async () => {
        const { owner, conv } = await conversation()
        const guest = await user(fx.a)
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 1))
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 2))

        expect(await store.addParticipant(fx.a.id, conv.id, guest.id, T0 + 3)).toBe(true)
        expect(await store.isParticipant(fx.a.id, conv.id, guest.id)).toBe(true)
        expect(await store.getParticipant(fx.a.id, conv.id, guest.id)).toEqual(guest)
        expect(await store.addParticipant(fx.a.id, conv.id, guest.id, T0 + 4)).toBe(false)
        expect(await store.addParticipant(fx.a.id, conv.id, owner.id, T0 + 4)).toBe(false)
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(3)

        expect(await store.removeParticipant(fx.a.id, conv.id, guest.id, T0 + 5)).toBe(true)
        expect(await store.isParticipant(fx.a.id, conv.id, guest.id)).toBe(false)
        expect(await store.getParticipant(fx.a.id, conv.id, guest.id)).toBeUndefined()
        expect(await store.removeParticipant(fx.a.id, conv.id, guest.id, T0 + 6)).toBe(false)
        expect(await store.removeParticipant(fx.a.id, conv.id, 'never-joined', T0 + 6)).toBe(false)
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(4)

        const signals = await store.signalsSince(fx.a.id, conv.id, 2, 100)
        expect(signals).toEqual([
          { seq: 3, kind: 'participant_added', conversationId: conv.id, participantId: guest.id },
          { seq: 4, kind: 'participant_removed', conversationId: conv.id, participantId: guest.id },
        ])
        const next = await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 7))
        expect(next!.seq).toBe(5)
      })

      it('participant changes are scoped to their conversation and integration', async () => {
        const { conv } = await conversation()
        const { conv: other } = await conversation()
        const guest = await user(fx.a)
        await store.addParticipant(fx.a.id, conv.id, guest.id, T0)
        expect(await store.isParticipant(fx.a.id, other.id, guest.id)).toBe(false)
        expect(await store.isParticipant(fx.b.id, conv.id, guest.id)).toBe(false)
        expect(await store.getParticipant(fx.b.id, conv.id, guest.id)).toBeUndefined()
        expect(await store.removeParticipant(fx.a.id, other.id, guest.id, T0)).toBe(false)
        expect(await store.removeParticipant(fx.b.id, conv.id, guest.id, T0)).toBe(false)
        expect(await store.isParticipant(fx.a.id, conv.id, guest.id)).toBe(true)
        expect(await store.signalsSince(fx.a.id, other.id, 0, 100)).toEqual([])
      })

      it('removeParticipant on a missing conversation → false', async () => {
        const u = await user(fx.a)
        expect(await store.removeParticipant(fx.a.id, 'no-such-conv', u.id, T0)).toBe(false)
      })

      it('a participant can leave and re-join; every change is a signal', async () => {
        const { conv } = await conversation()
        const guest = await user(fx.a)
        expect(await store.addParticipant(fx.a.id, conv.id, guest.id, T0 + 1)).toBe(true)
        expect(await store.removeParticipant(fx.a.id, conv.id, guest.id, T0 + 2)).toBe(true)
        expect(await store.addParticipant(fx.a.id, conv.id, guest.id, T0 + 3)).toBe(true)
        expect((await store.signalsSince(fx.a.id, conv.id, 0, 10)).map((s) => [s.seq, s.kind])).toEqual([
          [1, 'participant_added'], [2, 'participant_removed'], [3, 'participant_added'],
        ])
        expect(await store.isParticipant(fx.a.id, conv.id, guest.id)).toBe(true)
      })

      it('owner may leave their own conversation', async () => {
        const { owner, conv } = await conversation()
        expect(await store.removeParticipant(fx.a.id, conv.id, owner.id, T0 + 1)).toBe(true)
        expect(await store.isParticipant(fx.a.id, conv.id, owner.id)).toBe(false)
        expect(await store.signalsSince(fx.a.id, conv.id, 0, 10)).toEqual([
          { seq: 1, kind: 'participant_removed', conversationId: conv.id, participantId: owner.id },
        ])
      })
    })

    // ------------------------------------------------------------------ messages and events
    describe('messages and events', () => {
      it('appendMessage assigns seq 1,2,3… and returns the stored row', async () => {
        const { owner, conv } = await conversation()
        const rows: MessageRow[] = []
        for (let i = 0; i < 5; i++) {
          const input = newMessage(fx.a.id, conv.id, owner.id, T0 + 1000 * (i + 1), { type: 'text', text: `m${i}` }, i % 2 ? { i } : null)
          const row = (await store.appendMessage(input))!
          expect(row).toMatchObject({
            id: input.id, integrationId: fx.a.id, conversationId: conv.id, seq: i + 1, userId: owner.id, isBot: false,
            payload: input.payload, metadata: input.metadata, createdAt: T0 + 1000 * (i + 1),
          })
          expect(row).not.toHaveProperty('now')
          expect(await store.getMessage(fx.a.id, row.id)).toEqual(row)
          rows.push(row)
        }
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(5)
      })

      it('isBot round-trips', async () => {
        const { owner, conv } = await conversation()
        const m = await store.appendMessage({ ...newMessage(fx.a.id, conv.id, owner.id, T0), isBot: true })
        expect(m!.isBot).toBe(true)
        expect((await store.getMessage(fx.a.id, m!.id))!.isBot).toBe(true)
        const e = await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: true, payload: {}, now: T0 })
        expect((await store.getEvent(fx.a.id, e!.id))!.isBot).toBe(true)
      })

      it('createdAt is strictly increasing even when `now` repeats or goes backwards', async () => {
        const { owner, conv } = await conversation(T0)
        const nows = [T0 + 500, T0 + 500, T0 + 500, T0 + 100, T0 + 499, T0 + 501, T0 - 10_000, T0 + 2000, T0 + 2000]
        const created: number[] = []
        for (const [i, now] of nows.entries()) {
          const row = i % 3 === 2
            ? await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { i }, now })
            : await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, now))
          expect(row!.seq).toBe(i + 1)
          created.push(row!.createdAt)
        }
        for (let i = 1; i < created.length; i++) expect(created[i]!).toBeGreaterThan(created[i - 1]!)
        // the clock is honoured when it moves forward past the last timestamp
        expect(created[0]).toBe(T0 + 500)
        expect(created[7]).toBe(T0 + 2000)
        // and reads agree with what append returned
        const listed = (await store.listMessages(fx.a.id, conv.id, { limit: 100 })).items
        for (const m of listed) expect(m.createdAt).toBe(created[m.seq - 1])
        const signals = await store.signalsSince(fx.a.id, conv.id, 0, 100)
        expect(seqs(signals)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
        for (const s of signals) {
          const at = s.kind === 'message_created' ? s.message.createdAt : s.kind === 'event_created' ? s.event.createdAt : undefined
          expect(at).toBe(created[s.seq - 1])
        }
      })

      it('signalsSince pages a mix of messages, events and other signals by seq, whatever the limit', async () => {
        const { owner, conv } = await conversation()
        const guest = await user(fx.a)
        const event = () => store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: {}, now: T0 })
        const message = () => store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        // seq: 1 m, 2 m, 3 event, 4 m, 5 participant_added, 6 m, 7 m
        await message(); await message(); await event(); await message()
        await store.addParticipant(fx.a.id, conv.id, guest.id, T0)
        await message(); await message()
        const letter = { message_created: 'm', event_created: 'e', participant_added: 'p', participant_removed: 'r', message_deleted: 'd' }
        const kinds = async (after: number, limit: number) =>
          (await store.signalsSince(fx.a.id, conv.id, after, limit)).map((s) => `${s.seq}${letter[s.kind]}`)
        expect(await kinds(0, 2)).toEqual(['1m', '2m'])
        expect(await kinds(0, 3)).toEqual(['1m', '2m', '3e'])
        expect(await kinds(0, 100)).toEqual(['1m', '2m', '3e', '4m', '5p', '6m', '7m'])
        expect(await kinds(2, 2)).toEqual(['3e', '4m'])
        expect(await kinds(3, 1)).toEqual(['4m'])
        expect(await kinds(3, 2)).toEqual(['4m', '5p'])
        expect(await kinds(5, 100)).toEqual(['6m', '7m'])
        expect(await kinds(7, 100)).toEqual([])
        // a deleted message leaves a gap in the messages and a signal of its own
        const last = (await store.listMessages(fx.a.id, conv.id, { limit: 1 })).items[0]!
        await store.deleteMessage(fx.a.id, last.id, T0)
        expect(await kinds(5, 100)).toEqual(['6m', '8d'])
      })

      it('messages and events share one sequence', async () => {
        const { owner, conv } = await conversation()
        const kinds: string[] = []
        for (let i = 0; i < 6; i++) {
          if (i % 2) {
            const e = await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { i }, now: T0 })
            expect(e!.seq).toBe(i + 1)
            expect(await store.getEvent(fx.a.id, e!.id)).toEqual(e)
            kinds.push('event_created')
          } else {
            const m = await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
            expect(m!.seq).toBe(i + 1)
            kinds.push('message_created')
          }
        }
        expect((await store.signalsSince(fx.a.id, conv.id, 0, 100)).map((s) => s.kind)).toEqual(kinds)
      })

      it('appendMessage / appendEvent on a missing conversation → undefined, nothing stored', async () => {
        const u = await user(fx.a)
        const m = newMessage(fx.a.id, 'no-such-conv', u.id, T0)
        expect(await store.appendMessage(m)).toBeUndefined()
        expect(await store.getMessage(fx.a.id, m.id)).toBeUndefined()
        const e = { id: uid('evt'), integrationId: fx.a.id, conversationId: 'no-such-conv', userId: u.id, isBot: false, payload: {}, now: T0 }
        expect(await store.appendEvent(e)).toBeUndefined()
        expect(await store.getEvent(fx.a.id, e.id)).toBeUndefined()
        // a conversation of another integration is missing too
        const { conv } = await conversation()
        const cross = newMessage(fx.b.id, conv.id, u.id, T0)
        expect(await store.appendMessage(cross)).toBeUndefined()
        expect(await store.appendEvent({ ...e, id: uid('evt'), integrationId: fx.b.id, conversationId: conv.id })).toBeUndefined()
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(0)
        expect(await store.getMessage(fx.a.id, cross.id)).toBeUndefined()
      })

      it('ifAbsent: an id already taken appends nothing (no row, no seq) and answers the stored row, marked existing', async () => {
        const { owner, conv } = await conversation()
        const m = { ...newMessage(fx.a.id, conv.id, owner.id, T0, { type: 'text', text: 'first' }), ifAbsent: true }
        const first = (await store.appendMessage(m))!
        expect(first).toMatchObject({ id: m.id, seq: 1 })
        expect(first).not.toHaveProperty('existing')
        const again = await store.appendMessage({ ...m, payload: { type: 'text', text: 'second' }, now: T0 + 5 })
        expect(again).toEqual({ ...first, existing: true })
        const e = { id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { k: 1 }, ifAbsent: true, now: T0 + 6 }
        const event = (await store.appendEvent(e))!
        expect(event).toMatchObject({ id: e.id, seq: 2 })
        expect(await store.appendEvent({ ...e, payload: { k: 2 } })).toEqual({ ...event, existing: true })
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(2)
        expect((await store.listMessages(fx.a.id, conv.id, { limit: 10 })).items).toEqual([first])
        expect(await store.getEvent(fx.a.id, e.id)).toEqual(event)
        // the next append takes the next seq: the refused ones took none
        expect(await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 7))).toMatchObject({ seq: 3 })
      })

      it('ifAbsent: concurrent appends of one id, in one conversation or several, write it once; the others answer that row', async () => {
        const { owner, conv } = await conversation()
        const m = { ...newMessage(fx.a.id, conv.id, owner.id, T0), ifAbsent: true }
        const same = await Promise.all(Array.from({ length: 5 }, () => store.appendMessage(m)))
        expect(same.filter((r) => r!.existing === undefined)).toHaveLength(1)
        expect(new Set(same.map((r) => r!.seq))).toEqual(new Set([1]))
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(1)
        // the same id sent to two conversations at once (one group commit or statement): one of them gets it
        const two = await Promise.all([conversation(), conversation()])
        const id = uid('msg')
        const rows = await Promise.all(two.map(({ owner: o, conv: c }) => store.appendMessage({ ...newMessage(fx.a.id, c.id, o.id, T0), id, ifAbsent: true })))
        const created = rows.filter((r) => r!.existing === undefined)
        expect(created).toHaveLength(1)
        expect(rows.map((r) => r!.conversationId)).toEqual([created[0]!.conversationId, created[0]!.conversationId])
        const seqs = await Promise.all(two.map(async ({ conv: c }) => (await store.getConversation(fx.a.id, c.id))!.lastSeq))
        expect(seqs.sort()).toEqual([0, 1])
      })

      it('ifAbsent: an id taken in another integration fails the append, which takes no seq', async () => {
        const { owner, conv } = await conversation()
        const taken = (await store.appendMessage({ ...newMessage(fx.a.id, conv.id, owner.id, T0), ifAbsent: true }))!
        const ub = await user(fx.b)
        const convB = await store.createConversation(fx.b.id, uid('conv'), ub.id, T0)
        await expect(store.appendMessage({ ...newMessage(fx.b.id, convB.id, ub.id, T0), id: taken.id, ifAbsent: true })).rejects.toThrow()
        expect((await store.getConversation(fx.b.id, convB.id))!.lastSeq).toBe(0)
        expect(await store.getMessage(fx.b.id, taken.id)).toBeUndefined()
      })

      it('requireParticipant: only a participant appends; others and removed participants get undefined, nothing stored', async () => {
        const { owner, conv } = await conversation()
        const outsider = await user(fx.a)
        const leaver = await user(fx.a)
        await store.addParticipant(fx.a.id, conv.id, leaver.id, T0)
        await store.removeParticipant(fx.a.id, conv.id, leaver.id, T0)
        const before = (await store.getConversation(fx.a.id, conv.id))!.lastSeq
        for (const u of [outsider, leaver]) {
          const m = { ...newMessage(fx.a.id, conv.id, u.id, T0 + 1), requireParticipant: true }
          expect(await store.appendMessage(m)).toBeUndefined()
          expect(await store.getMessage(fx.a.id, m.id)).toBeUndefined()
          const e = { id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: u.id, isBot: false, payload: {}, requireParticipant: true, now: T0 + 1 }
          expect(await store.appendEvent(e)).toBeUndefined()
          expect(await store.getEvent(fx.a.id, e.id)).toBeUndefined()
        }
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(before)
        expect(await store.appendMessage({ ...newMessage(fx.a.id, 'no-such-conv', owner.id, T0), requireParticipant: true })).toBeUndefined()

        const m = await store.appendMessage({ ...newMessage(fx.a.id, conv.id, owner.id, T0 + 2), requireParticipant: true })
        expect(m).toMatchObject({ conversationId: conv.id, userId: owner.id, seq: before + 1 })
        expect(m).not.toHaveProperty('requireParticipant')
        expect(await store.getMessage(fx.a.id, m!.id)).toEqual(m)
        const e = await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { k: 1 }, requireParticipant: true, now: T0 + 3 })
        expect(e).toMatchObject({ seq: before + 2, payload: { k: 1 } })
        expect(await store.getEvent(fx.a.id, e!.id)).toEqual(e)
      })

      it('concurrent appends across conversations (group commit): each gets its own answer, refused ones included', async () => {
        const convs = await Promise.all(Array.from({ length: 8 }, () => conversation()))
        const outsider = await user(fx.a)
        type Sent = { conv: string; kind: 'message' | 'event' | 'refused' | 'missing'; id: string; now: number }
        const sent: Sent[] = []
        const calls: Promise<unknown>[] = []
        for (let round = 0; round < 5; round++) {
          for (const [i, { owner, conv }] of convs.entries()) {
            const now = T0 + round * 10 - i // not in step with the order of arrival
            const k = (round + i) % 4
            if (k === 0 || k === 1) {
              const m = { ...newMessage(fx.a.id, conv.id, owner.id, now, { type: 'text', text: `r${round} c${i}` }, k === 1 ? { r: round } : null), requireParticipant: true }
              sent.push({ conv: conv.id, kind: 'message', id: m.id, now })
              calls.push(store.appendMessage(m))
            } else if (k === 2) {
              const e = { id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: true, payload: { round, i }, botSkip: true, requireParticipant: true, now }
              sent.push({ conv: conv.id, kind: 'event', id: e.id, now })
              calls.push(store.appendEvent(e))
            } else {
              const m = { ...newMessage(fx.a.id, conv.id, outsider.id, now), requireParticipant: true }
              sent.push({ conv: conv.id, kind: 'refused', id: m.id, now })
              calls.push(store.appendMessage(m))
            }
          }
          const missing = newMessage(fx.a.id, uid('missing'), outsider.id, T0)
          sent.push({ conv: missing.conversationId, kind: 'missing', id: missing.id, now: T0 })
          calls.push(store.appendMessage(missing))
        }
        const results = (await Promise.all(calls)) as ({ id: string; conversationId: string; seq: number; createdAt: number } | undefined)[]
        results.forEach((r, i) => {
          const s = sent[i]!
          if (s.kind === 'refused' || s.kind === 'missing') expect(r).toBeUndefined()
          else expect(r).toMatchObject({ id: s.id, conversationId: s.conv })
        })
        for (const { conv } of convs) {
          const mine = results.filter((r) => r?.conversationId === conv.id)
          // seqs 1..n without a gap (refused appends took none), createdAt strictly increasing with seq
          expect(mine.map((r) => r!.seq).sort((a, b) => a - b)).toEqual(mine.map((_, i) => i + 1))
          const bySeq = [...mine].sort((a, b) => a!.seq - b!.seq)
          for (let i = 1; i < bySeq.length; i++) expect(bySeq[i]!.createdAt).toBeGreaterThan(bySeq[i - 1]!.createdAt)
          expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(mine.length)
          const signals = await store.signalsSince(fx.a.id, conv.id, 0, 100)
          expect(signals.map((x) => x.seq)).toEqual(mine.map((_, i) => i + 1))
        }
        for (const [i, s] of sent.entries()) {
          if (s.kind === 'message') expect(await store.getMessage(fx.a.id, s.id)).toEqual(results[i])
          if (s.kind === 'event') expect(await store.getEvent(fx.a.id, s.id)).toEqual(results[i])
          if (s.kind === 'refused' || s.kind === 'missing') expect(await store.getMessage(fx.a.id, s.id)).toBeUndefined()
        }
      })

      it('a failing append among concurrent ones fails alone, and takes no seq', async () => {
        const convs = await Promise.all(Array.from({ length: 4 }, () => conversation()))
        const taken = newMessage(fx.a.id, convs[0]!.conv.id, convs[0]!.owner.id, T0)
        await store.appendMessage(taken)
        const appends = convs.map(({ owner, conv }, i) => ({ ...newMessage(fx.a.id, conv.id, owner.id, T0), ...(i === 2 && { id: taken.id }) }))
        const settled = await Promise.allSettled(appends.map((m) => store.appendMessage(m)))
        expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
        expect(await store.getMessage(fx.a.id, taken.id)).toMatchObject({ conversationId: convs[0]!.conv.id })
        expect((await store.getConversation(fx.a.id, convs[2]!.conv.id))!.lastSeq).toBe(0)
        for (const i of [0, 1, 3]) {
          const m = (settled[i] as PromiseFulfilledResult<{ id: string; seq: number }>).value
          expect(m.seq).toBe(i === 0 ? 2 : 1)
          expect(await store.getMessage(fx.a.id, m.id)).toMatchObject({ seq: m.seq })
        }
      })

      it('getMessage / getEvent are scoped per integration', async () => {
        const { owner, conv } = await conversation()
        const m = await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const e = await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { a: 1 }, now: T0 })
        expect(await store.getMessage(fx.b.id, m!.id)).toBeUndefined()
        expect(await store.getEvent(fx.b.id, e!.id)).toBeUndefined()
        expect(await store.getMessage(fx.a.id, uid('msg'))).toBeUndefined()
        expect(await store.getEvent(fx.a.id, uid('evt'))).toBeUndefined()
        // an event is not a message and vice versa
        expect(await store.getMessage(fx.a.id, e!.id)).toBeUndefined()
        expect(await store.getEvent(fx.a.id, m!.id)).toBeUndefined()
      })

      it('deleteMessage removes the message and records message_deleted with the next seq', async () => {
        const { owner, conv } = await conversation()
        const guest = await user(fx.a)
        await store.addParticipant(fx.a.id, conv.id, guest.id, T0)
        const m1 = (await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 1)))!
        const m2 = (await store.appendMessage(newMessage(fx.a.id, conv.id, guest.id, T0 + 2, { type: 'text', text: 'bye' })))!

        expect(await store.deleteMessage(fx.b.id, m2.id, T0 + 3)).toBeUndefined()
        expect(await store.getMessage(fx.a.id, m2.id)).toEqual(m2)

        const deleted = await store.deleteMessage(fx.a.id, m2.id, T0 + 3)
        expect(deleted).toEqual(m2)
        expect(await store.getMessage(fx.a.id, m2.id)).toBeUndefined()
        expect(await store.deleteMessage(fx.a.id, m2.id, T0 + 4)).toBeUndefined()
        expect(await store.deleteMessage(fx.a.id, uid('msg'), T0 + 4)).toBeUndefined()
        expect((await store.listMessages(fx.a.id, conv.id, { limit: 10 })).items).toEqual([m1])
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(4)
        const signals = await store.signalsSince(fx.a.id, conv.id, 3, 10)
        expect(signals).toEqual([{ seq: 4, kind: 'message_deleted', id: m2.id, conversationId: conv.id, userId: guest.id }])
        const m3 = await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + 5))
        expect(m3!.seq).toBe(5)
      })
    })

    // ------------------------------------------------------------------ signals
    describe('signalsSince', () => {
      /** m1(1) e1(2) +g(3) m2(4) -g(5) e2(6) m3(7) m4(8) ×m2(9) e3(10) */
      const history = async () => {
        const { owner, conv } = await conversation()
        const guest = await user(fx.a)
        const ev = (i: number) => store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { i }, now: T0 + i })
        const msg = (i: number) => store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + i, { type: 'text', text: `#${i}` }))
        const m1 = await msg(1)
        const e1 = await ev(2)
        await store.addParticipant(fx.a.id, conv.id, guest.id, T0 + 3)
        const m2 = await msg(4)
        await store.removeParticipant(fx.a.id, conv.id, guest.id, T0 + 5)
        const e2 = await ev(6)
        const m3 = await msg(7)
        const m4 = await msg(8)
        await store.deleteMessage(fx.a.id, m2!.id, T0 + 9)
        const e3 = await ev(10)
        return { owner, guest, conv, m1: m1!, e1: e1!, m2: m2!, e2: e2!, m3: m3!, m4: m4!, e3: e3! }
      }

      it('merges messages, events and other signals in seq order', async () => {
        const h = await history()
        const all = await store.signalsSince(fx.a.id, h.conv.id, 0, 100)
        expect(all).toEqual([
          { seq: 1, kind: 'message_created', message: h.m1 },
          { seq: 2, kind: 'event_created', event: h.e1 },
          { seq: 3, kind: 'participant_added', conversationId: h.conv.id, participantId: h.guest.id },
          // seq 4 was message m2, deleted since
          { seq: 5, kind: 'participant_removed', conversationId: h.conv.id, participantId: h.guest.id },
          { seq: 6, kind: 'event_created', event: h.e2 },
          { seq: 7, kind: 'message_created', message: h.m3 },
          { seq: 8, kind: 'message_created', message: h.m4 },
          { seq: 9, kind: 'message_deleted', id: h.m2.id, conversationId: h.conv.id, userId: h.owner.id },
          { seq: 10, kind: 'event_created', event: h.e3 },
        ])
      })

      it('respects afterSeq', async () => {
        const h = await history()
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 3, 100))).toEqual([5, 6, 7, 8, 9, 10])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 4, 100))).toEqual([5, 6, 7, 8, 9, 10])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 8, 100))).toEqual([9, 10])
        expect(await store.signalsSince(fx.a.id, h.conv.id, 10, 100)).toEqual([])
        expect(await store.signalsSince(fx.a.id, h.conv.id, 1000, 100)).toEqual([])
      })

      it('respects limit, including a limit smaller than the total across kinds', async () => {
        const h = await history()
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 0, 1))).toEqual([1])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 0, 2))).toEqual([1, 2])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 0, 3))).toEqual([1, 2, 3])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 0, 4))).toEqual([1, 2, 3, 5])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 5, 3))).toEqual([6, 7, 8])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 6, 2))).toEqual([7, 8])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 7, 2))).toEqual([8, 9])
        expect(seqs(await store.signalsSince(fx.a.id, h.conv.id, 0, 9))).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10])
      })

      it('replaying in small batches sees every signal exactly once', async () => {
        const h = await history()
        for (const batch of [1, 2, 3, 4]) {
          const seen: number[] = []
          let after = 0
          for (;;) {
            const got = await store.signalsSince(fx.a.id, h.conv.id, after, batch)
            if (got.length === 0) break
            expect(got.length).toBeLessThanOrEqual(batch)
            seen.push(...seqs(got))
            after = got[got.length - 1]!.seq
          }
          expect(seen).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10])
        }
      })

      it('a limit smaller than one kind alone, with many of each kind', async () => {
        const { owner, conv } = await conversation()
        const guests = await Promise.all(Array.from({ length: 5 }, () => user(fx.a)))
        const expected: string[] = []
        for (let i = 0; i < 5; i++) {
          await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: {}, now: T0 })
          expected.push('event_created')
          await store.addParticipant(fx.a.id, conv.id, guests[i]!.id, T0)
          expected.push('participant_added')
          await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
          expected.push('message_created')
        }
        for (const limit of [1, 2, 4, 5, 7, 14, 15, 16]) {
          const got = await store.signalsSince(fx.a.id, conv.id, 0, limit)
          expect(seqs(got)).toEqual(Array.from({ length: Math.min(limit, 15) }, (_, i) => i + 1))
          expect(got.map((s) => s.kind)).toEqual(expected.slice(0, limit))
        }
      })

      it('only returns signals of the asked conversation and integration', async () => {
        const h = await history()
        const { owner, conv: other } = await conversation()
        await store.appendMessage(newMessage(fx.a.id, other.id, owner.id, T0))
        expect(seqs(await store.signalsSince(fx.a.id, other.id, 0, 100))).toEqual([1])
        expect(await store.signalsSince(fx.b.id, h.conv.id, 0, 100)).toEqual([])
        expect(await store.signalsSince(fx.a.id, 'no-such-conv', 0, 100)).toEqual([])
      })
    })

    // ------------------------------------------------------------------ paging
    describe('paging', () => {
      it('listMessages: newest first, never skips or repeats, even with inserts between pages', async () => {
        const { owner, conv } = await conversation()
        const original: MessageRow[] = []
        for (let i = 0; i < 23; i++) original.push((await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + i)))!)

        const pages = await collect((after) => store.listMessages(fx.a.id, conv.id, { after, limit: 5 }))
        expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3])
        expect(pages.flat()).toEqual([...original].reverse())

        const inserted: string[] = []
        const pages2 = await collect(
          (after) => store.listMessages(fx.a.id, conv.id, { after, limit: 4 }),
          async () => {
            for (let k = 0; k < 3; k++) inserted.push((await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0)))!.id)
          },
        )
        const ids = pages2.flat().map((m) => m.id)
        expect(new Set(ids).size).toBe(ids.length)
        for (const m of original) expect(ids).toContain(m.id)
        const seqList = pages2.flat().map((m) => m.seq)
        for (let i = 1; i < seqList.length; i++) expect(seqList[i]!).toBeLessThan(seqList[i - 1]!)
        expect(inserted.length).toBeGreaterThan(0)
      })

      it('listMessages: deleting rows between pages neither skips nor repeats the rest', async () => {
        const { owner, conv } = await conversation()
        const original: MessageRow[] = []
        for (let i = 0; i < 12; i++) original.push((await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0 + i)))!)
        const first = await store.listMessages(fx.a.id, conv.id, { limit: 4 })
        // delete the cursor row itself and one on the next page
        await store.deleteMessage(fx.a.id, first.items[3]!.id, T0 + 100)
        await store.deleteMessage(fx.a.id, original[6]!.id, T0 + 100)
        const rest = await collect((after) => store.listMessages(fx.a.id, conv.id, { after: after ?? first.next, limit: 4 }))
        const expected = [...original].reverse().slice(4).filter((m) => m.id !== original[6]!.id)
        expect(rest.flat()).toEqual(expected)
      })

      it('the last page has no next token; an exact fit does not need an extra page', async () => {
        const { owner, conv } = await conversation()
        expect(await store.listMessages(fx.a.id, conv.id, { limit: 5 })).toEqual({ items: [] })
        for (let i = 0; i < 5; i++) await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const page = await store.listMessages(fx.a.id, conv.id, { limit: 5 })
        expect(page.items).toHaveLength(5)
        expect(page.next).toBeUndefined()
        const small = await store.listMessages(fx.a.id, conv.id, { limit: 4 })
        expect(small.items).toHaveLength(4)
        expect(small.next).toEqual(expect.any(String))
        const last = await store.listMessages(fx.a.id, conv.id, { limit: 4, after: small.next })
        expect(last.items.map((m) => m.seq)).toEqual([1])
        expect(last.next).toBeUndefined()
      })

      it('listConversationsOf: newest first, never skips or repeats, even with inserts between pages', async () => {
        const me = await user(fx.a, 'me')
        const stranger = await user(fx.a, 'stranger')
        const expected: string[] = []
        // distinct and tied creation times, owned by me or joined later
        for (let i = 0; i < 14; i++) {
          const created = T0 + Math.floor(i / 3) * 1000
          const id = `conv-${String(i).padStart(2, '0')}`
          if (i % 2 === 0) {
            await store.createConversation(fx.a.id, id, me.id, created)
          } else {
            await store.createConversation(fx.a.id, id, stranger.id, created)
            await store.addParticipant(fx.a.id, id, me.id, created + 5)
          }
          expected.push(id)
        }
        // conversations I am not part of, and mine in the other integration
        await store.createConversation(fx.a.id, 'not-mine', stranger.id, T0 + 500)
        const meB = await user(fx.b, 'me')
        await store.createConversation(fx.b.id, 'other-integration', meB.id, T0 + 500)

        const pages = await collect((after) => store.listConversationsOf(fx.a.id, me.id, { after, limit: 4 }))
        expect(pages.map((p) => p.length)).toEqual([4, 4, 4, 2])
        const got = pages.flat()
        expect(got.map((c) => c.id).sort()).toEqual([...expected].sort())
        for (let i = 1; i < got.length; i++) expect(got[i]!.createdAt).toBeLessThanOrEqual(got[i - 1]!.createdAt)
        expect(got[0]!.createdAt).toBe(T0 + 4000)
        for (const c of got) expect(c.integrationId).toBe(fx.a.id)

        // with new conversations appearing between pages, including ones tied with the cursor row
        // (ids on both sides of the cursor id) and newer ones
        let n = 0
        let lastSeen: ConversationRow | undefined
        const pages2 = await collect(
          async (after) => {
            const page = await store.listConversationsOf(fx.a.id, me.id, { after, limit: 3 })
            lastSeen = page.items[page.items.length - 1]
            return page
          },
          async (pageIndex) => {
            const tie = lastSeen!.createdAt
            await store.createConversation(fx.a.id, `new-${n++}`, me.id, T0 + 10_000 + pageIndex)
            await store.createConversation(fx.a.id, `aaa-new-${n++}`, me.id, tie)
            await store.createConversation(fx.a.id, `zzz-new-${n++}`, me.id, tie)
          },
        )
        const ids = pages2.flat().map((c) => c.id)
        expect(new Set(ids).size).toBe(ids.length)
        for (const id of expected) expect(ids).toContain(id)
        const times = pages2.flat().map((c) => c.createdAt)
        for (let i = 1; i < times.length; i++) expect(times[i]!).toBeLessThanOrEqual(times[i - 1]!)
        expect(n).toBeGreaterThan(0)
      })

      it('listConversationsOf: a conversation appears once even with many participants', async () => {
        const me = await user(fx.a)
        const others = await Promise.all(Array.from({ length: 4 }, () => user(fx.a)))
        const conv = await store.createConversation(fx.a.id, uid('conv'), me.id, T0)
        for (const o of others) await store.addParticipant(fx.a.id, conv.id, o.id, T0 + 1)
        const mine = (await store.listConversationsOf(fx.a.id, me.id, { limit: 10 })).items
        expect(mine.map((c) => c.id)).toEqual([conv.id])
        expect(mine[0]).toMatchObject({ integrationId: fx.a.id, ownerId: me.id, createdAt: T0, lastSeq: 4 })
        expect((await store.listConversationsOf(fx.a.id, others[0]!.id, { limit: 10 })).items.map((c) => c.id)).toEqual([conv.id])
      })

      it('listParticipants: join order, never skips or repeats, even with joins between pages', async () => {
        const owner = await user(fx.a, 'p-owner')
        const conv = await store.createConversation(fx.a.id, uid('conv'), owner.id, T0)
        const joined: UserRow[] = [owner]
        // ids deliberately not in join order
        for (let i = 0; i < 9; i++) {
          const u = await user(fx.a, `p-${String(9 - i)}`)
          await store.addParticipant(fx.a.id, conv.id, u.id, T0 + 10 * (i + 1))
          joined.push(u)
        }
        const pages = await collect((after) => store.listParticipants(fx.a.id, conv.id, { after, limit: 3 }))
        expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 1])
        expect(pages.flat()).toEqual(joined)

        // ties in join time
        const tied: UserRow[] = []
        const conv2 = await store.createConversation(fx.a.id, uid('conv'), owner.id, T0)
        for (let i = 0; i < 7; i++) {
          const u = await user(fx.a)
          await store.addParticipant(fx.a.id, conv2.id, u.id, T0)
          tied.push(u)
        }
        let k = 0
        const pages2 = await collect(
          (after) => store.listParticipants(fx.a.id, conv2.id, { after, limit: 2 }),
          async () => {
            for (const at of [T0, T0 + 1_000]) {
              const u = await user(fx.a, `late-${k++}`)
              await store.addParticipant(fx.a.id, conv2.id, u.id, at)
            }
          },
        )
        const ids = pages2.flat().map((u) => u.id)
        expect(new Set(ids).size).toBe(ids.length)
        for (const u of [owner, ...tied]) expect(ids).toContain(u.id)
        // everyone who joined later than the original participants comes after all of them
        const lastOriginal = Math.max(...[owner, ...tied].map((u) => ids.indexOf(u.id)))
        const laterJoiners = ids.filter((id) => id.startsWith('late-') && Number(id.slice(5)) % 2 === 1)
        for (const id of laterJoiners) expect(ids.indexOf(id)).toBeGreaterThan(lastOriginal)
        expect(k).toBeGreaterThan(0)
      })

      it('a forged cursor throws an ApiError of type InvalidQuery', async () => {
        const { owner, conv } = await conversation()
        for (let i = 0; i < 3; i++) await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const lists: [string, (after: string) => Promise<unknown>][] = [
          ['listMessages', (after) => store.listMessages(fx.a.id, conv.id, { after, limit: 1 })],
          ['listConversationsOf', (after) => store.listConversationsOf(fx.a.id, owner.id, { after, limit: 1 })],
          ['listParticipants', (after) => store.listParticipants(fx.a.id, conv.id, { after, limit: 1 })],
          ['listWorkspacesOf', (after) => store.listWorkspacesOf(uid('acc'), { after, limit: 1 })],
          ['listMembers', (after) => store.listMembers(fx.workspace.id, { after, limit: 1 })],
          ['listBots', (after) => store.listBots({ workspaceId: fx.workspace.id, sortField: 'createdAt', sortDirection: 'desc' }, { after, limit: 1 })],
        ]
        for (const [, list] of lists) {
          for (const forged of FORGED_CURSORS) await expectInvalidQuery(list(forged))
        }
        // a cursor of the wrong shape for this list
        await expectInvalidQuery(store.listMessages(fx.a.id, conv.id, { after: encodeCursor([T0, 'conv']), limit: 1 }))
        await expectInvalidQuery(store.listConversationsOf(fx.a.id, owner.id, { after: encodeCursor([3]), limit: 1 }))
        await expectInvalidQuery(store.listParticipants(fx.a.id, conv.id, { after: encodeCursor(['x', 3]), limit: 1 }))
        // a genuine cursor with one character flipped
        const real = (await store.listMessages(fx.a.id, conv.id, { limit: 1 })).next!
        expect((await store.listMessages(fx.a.id, conv.id, { after: real, limit: 1 })).items).toHaveLength(1)
        const flipped = real.slice(0, 1) + (real[1] === 'A' ? 'B' : 'A') + real.slice(2)
        await expectInvalidQuery(store.listMessages(fx.a.id, conv.id, { after: flipped, limit: 1 }))
        await expectInvalidQuery(store.listMessages(fx.a.id, conv.id, { after: real + '=', limit: 1 }))
        await expectInvalidQuery(store.listMessages(fx.a.id, conv.id, { after: real.slice(0, -1), limit: 1 }))
        await expectInvalidQuery(store.listMessages(fx.a.id, conv.id, { after: ` ${real}`, limit: 1 }))
      })

      it('a well-formed cursor with hostile values never causes anything but a page or InvalidQuery', async () => {
        const { owner, conv } = await conversation()
        for (let i = 0; i < 3; i++) await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const hostile = ['', '\u0000', 'a\u0000b', '\ud800', "' OR 1=1 --", '😀'.repeat(50), '%', '_']
        const numbers = [0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]
        // settle at once: on an engine with real I/O (PostgreSQL) an early rejection would otherwise
        // sit unhandled while the loop below awaits the attempts before it
        const settle = (p: Promise<unknown>) => p.then((page) => ({ page }), (err: unknown) => ({ err }))
        const attempts: Promise<{ page: unknown } | { err: unknown }>[] = []
        for (const n of numbers) {
          attempts.push(settle(store.listMessages(fx.a.id, conv.id, { after: encodeCursor([n]), limit: 2 })))
          for (const s of hostile) {
            attempts.push(settle(store.listConversationsOf(fx.a.id, owner.id, { after: encodeCursor([n, s]), limit: 2 })))
            attempts.push(settle(store.listParticipants(fx.a.id, conv.id, { after: encodeCursor([n, s]), limit: 2 })))
          }
        }
        for (const attempt of attempts) {
          const outcome = await attempt
          if ('err' in outcome) {
            expect(outcome.err).toBeInstanceOf(ApiError)
            expect((outcome.err as ApiError).type).toBe('InvalidQuery')
          } else {
            expect(outcome.page).toHaveProperty('items')
          }
        }
        // seq cursors are exclusive upper bounds
        const page = await store.listMessages(fx.a.id, conv.id, { after: encodeCursor([3]), limit: 10 })
        expect(page.items.map((m) => m.seq)).toEqual([2, 1])
        expect((await store.listMessages(fx.a.id, conv.id, { after: encodeCursor([Number.MAX_SAFE_INTEGER]), limit: 10 })).items).toHaveLength(3)
        expect((await store.listMessages(fx.a.id, conv.id, { after: encodeCursor([0]), limit: 10 })).items).toEqual([])
      })
    })

    // ------------------------------------------------------------------ JSON fidelity
    describe('JSON documents', () => {
      it('message payload and metadata round-trip byte-exact', async () => {
        const { owner, conv } = await conversation()
        const payload = tortureDocument()
        const metadata: JsonObject = { source: 'contract ✓', nested: { deep: [tortureDocument().numbers!] }, '🔑': -0 }
        const appended = (await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0, payload, metadata)))!
        const stored = (await store.getMessage(fx.a.id, appended.id))!
        expect(JSON.stringify(stored.payload)).toBe(JSON.stringify(payload))
        expect(JSON.stringify(stored.metadata)).toBe(JSON.stringify(metadata))
        expect(stored.payload).toEqual(jsonRoundTrip(payload))
        expect(stored.metadata).toEqual(jsonRoundTrip(metadata))
        expect(Object.keys(stored.payload)).toEqual(Object.keys(payload))
        const numbers = stored.payload.numbers as Record<string, number>
        expect(numbers.max).toBe(1e308)
        expect(numbers.tiny).toBe(5e-324)
        expect(numbers.maxSafe).toBe(2 ** 53 - 1)
        expect(numbers.fraction).toBe(0.1 + 0.2)
        expect(Object.is(numbers.negZero, 0)).toBe(true) // JSON has no -0: it is stored as 0
        // what append returned serializes exactly like what is stored
        expect(JSON.stringify(appended.payload)).toBe(JSON.stringify(stored.payload))
        expect(JSON.stringify(appended.metadata)).toBe(JSON.stringify(stored.metadata))
        // every read path agrees
        const listed = (await store.listMessages(fx.a.id, conv.id, { limit: 1 })).items[0]!
        expect(JSON.stringify(listed.payload)).toBe(JSON.stringify(payload))
        const signal = (await store.signalsSince(fx.a.id, conv.id, 0, 1))[0]!
        expect(signal.kind).toBe('message_created')
        if (signal.kind === 'message_created') expect(JSON.stringify(signal.message.payload)).toBe(JSON.stringify(payload))
        const deleted = (await store.deleteMessage(fx.a.id, appended.id, T0 + 1))!
        expect(JSON.stringify(deleted.payload)).toBe(JSON.stringify(payload))
      })

      it('event payload round-trips byte-exact', async () => {
        const { owner, conv } = await conversation()
        const payload = tortureDocument()
        const appended = (await store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload, now: T0 }))!
        const stored = (await store.getEvent(fx.a.id, appended.id))!
        expect(JSON.stringify(stored.payload)).toBe(JSON.stringify(payload))
        expect(stored.payload).toEqual(jsonRoundTrip(payload))
        expect(JSON.stringify(appended.payload)).toBe(JSON.stringify(stored.payload))
        const signal = (await store.signalsSince(fx.a.id, conv.id, 0, 1))[0]!
        if (signal.kind !== 'event_created') throw new Error(`unexpected ${signal.kind}`)
        expect(JSON.stringify(signal.event.payload)).toBe(JSON.stringify(payload))
      })

      it('integration configuration and bot tags round-trip byte-exact', async () => {
        const bot = botRow(fx.workspace.id, T0, { tags: { 'ключ': 'значение', emoji: '😀👍🏽', quote: '"\\' } })
        const configuration = tortureDocument()
        const integration = integrationRow(bot.id, 'chat', T0, { configuration })
        await store.createBot(bot, [integration])
        const found = (await store.getIntegrationByWebhookId(integration.webhookId))!
        expect(JSON.stringify(found.configuration)).toBe(JSON.stringify(configuration))
        expect(found.configuration).toEqual(jsonRoundTrip(configuration))
        expect((await store.getBot(bot.id))!.tags).toEqual(bot.tags)
      })

      it('user fields keep arbitrary Unicode text', async () => {
        const name = 'Zoë 👨‍👩‍👧 «名前» \u2028 "q" \\'
        const profile = JSON.stringify(tortureDocument())
        const u = await store.createUser({ integrationId: fx.a.id, id: 'unicode', name, profile, pictureUrl: 'https://例え.テスト/😀.png', now: T0 })
        const stored = (await store.getUser(fx.a.id, 'unicode'))!
        expect(stored).toEqual(u)
        expect(stored.name).toBe(name)
        expect(stored.profile).toBe(profile)
      })
    })

    // ------------------------------------------------------------------ concurrency
    describe('concurrency', () => {
      it('100 concurrent appendMessage calls get 100 distinct consecutive seqs', async () => {
        const { owner, conv } = await conversation()
        const rows = await Promise.all(
          Array.from({ length: 100 }, (_, i) => store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0, { i }))),
        )
        const got = rows.map((r) => r!.seq).sort((x, y) => x - y)
        expect(got).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
        const bySeq = [...rows].map((r) => r!).sort((x, y) => x.seq - y.seq)
        for (let i = 1; i < bySeq.length; i++) expect(bySeq[i]!.createdAt).toBeGreaterThan(bySeq[i - 1]!.createdAt)
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(100)
        const pages = await collect((after) => store.listMessages(fx.a.id, conv.id, { after, limit: 30 }))
        expect(pages.flat().map((m) => m.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 100 - i))
        for (const r of rows) expect(await store.getMessage(fx.a.id, r!.id)).toEqual(r)
      })

      it('concurrent messages, events and participant changes share one gap-free sequence', async () => {
        const { owner, conv } = await conversation()
        const guests = await Promise.all(Array.from({ length: 10 }, () => user(fx.a)))
        const ops: Promise<unknown>[] = []
        for (let i = 0; i < 30; i++) ops.push(store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0)))
        for (let i = 0; i < 20; i++) ops.push(store.appendEvent({ id: uid('evt'), integrationId: fx.a.id, conversationId: conv.id, userId: owner.id, isBot: false, payload: { i }, now: T0 }))
        // each guest is added twice at once: exactly one of the pair wins
        const pairs = guests.map((g) => Promise.all([store.addParticipant(fx.a.id, conv.id, g.id, T0), store.addParticipant(fx.a.id, conv.id, g.id, T0)]))
        await Promise.all(ops)
        for (const pair of await Promise.all(pairs)) expect(pair.filter(Boolean)).toHaveLength(1)
        const signals = await store.signalsSince(fx.a.id, conv.id, 0, 1000)
        expect(seqs(signals)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1))
        expect(signals.filter((s) => s.kind === 'participant_added')).toHaveLength(10)
        expect((await store.getConversation(fx.a.id, conv.id))!.lastSeq).toBe(60)
      })

      it('concurrent appends to different conversations do not share sequences', async () => {
        const a = await conversation()
        const b = await conversation()
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => {
            const target = i % 2 ? a : b
            return store.appendMessage(newMessage(fx.a.id, target.conv.id, target.owner.id, T0))
          }),
        )
        expect(seqs(await store.signalsSince(fx.a.id, a.conv.id, 0, 100))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
        expect(seqs(await store.signalsSince(fx.a.id, b.conv.id, 0, 100))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      })
    })

    // ------------------------------------------------------------------ bot runtime, batched
    describe('bot runtime, batched (claimBotConversation, finishBotTurn, releaseBotConversation)', () => {
      const statesOf = (owner: string, conv: string) => [
        { scope: 'user' as const, scopeId: `${fx.a.id}:${owner}` },
        { scope: 'conversation' as const, scopeId: `${fx.a.id}:${conv}` },
      ]

      it('claim: the cursor when granted; refused while another owner holds a live lease, granted once it expired', async () => {
        const { owner, conv } = await conversation()
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'one', T0, 1000)).toEqual({ botSeq: 0, lastSeq: 1 })
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 500, 1000)).toBeUndefined()
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'one', T0 + 500, 1000)).toEqual({ botSeq: 0, lastSeq: 1 }) // renewed by its owner
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1400, 1000)).toBeUndefined() // renewal moved the end to T0 + 1500
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1501, 1000)).toEqual({ botSeq: 0, lastSeq: 1 })
        expect(await store.claimBotConversation(fx.a.id, 'no-such-conversation', 'one', T0, 1000)).toBeUndefined()
      })

      it('finish: states, logs, cursor and lease in one go; the cursor never moves back; the lease is renewed only for its holder', async () => {
        const { owner, conv } = await conversation()
        for (let i = 0; i < 3; i++) await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const bot = fx.bot.id
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'one', T0, 1000)).toEqual({ botSeq: 0, lastSeq: 3 })
        const [userKey, convKey] = statesOf(owner.id, conv.id)
        const log = (message: string, at: number) => ({ id: uid('log'), botId: bot, at, level: 'info', message, conversationId: conv.id })
        await store.finishBotTurn({
          botId: bot, integrationId: fx.a.id, conversationId: conv.id, seq: 2, now: T0 + 900,
          states: [{ ...userKey!, data: { n: 1, name: 'Ann ☃' } }, { ...convKey!, data: { list: [1, { two: 2 }] } }],
          logs: [log('first', T0 + 1), log('second', T0 + 2)], lease: { owner: 'one', ttlMs: 1000 },
        })
        expect(await store.getBotStates(bot, [userKey!, convKey!])).toEqual([{ n: 1, name: 'Ann ☃' }, { list: [1, { two: 2 }] }])
        expect((await store.listBotLogs(bot, {}, { limit: 10 })).items.map((l) => l.message)).toEqual(['first', 'second'])
        expect(await store.getBotCursor(fx.a.id, conv.id)).toEqual({ botSeq: 2, lastSeq: 3 })
        // renewed to T0 + 1900: another owner is still refused at T0 + 1500
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1500, 1000)).toBeUndefined()
        // a stale finish (lower seq, states overwritten, no logs) does not move the cursor back
        await store.finishBotTurn({ botId: bot, integrationId: fx.a.id, conversationId: conv.id, seq: 1, now: T0 + 1000, states: [{ ...userKey!, data: { n: 2 } }], logs: [] })
        expect(await store.getBotCursor(fx.a.id, conv.id)).toEqual({ botSeq: 2, lastSeq: 3 })
        expect(await store.getBotStates(bot, [userKey!])).toEqual([{ n: 2 }])
        // a finish by an owner that lost the lease does not renew it for itself
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 2000, 1000)).toEqual({ botSeq: 2, lastSeq: 3 })
        await store.finishBotTurn({ botId: bot, integrationId: fx.a.id, conversationId: conv.id, seq: 3, now: T0 + 2100, states: [], logs: [], lease: { owner: 'one', ttlMs: 60_000 } })
        expect(await store.getBotCursor(fx.a.id, conv.id)).toEqual({ botSeq: 3, lastSeq: 3 })
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'one', T0 + 3001, 1000)).toEqual({ botSeq: 3, lastSeq: 3 }) // 'two' expired at T0 + 3000
      })

      it('finish is all or nothing: a failing log insert (duplicate id) leaves states and cursor as they were', async () => {
        const { owner, conv } = await conversation()
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const bot = fx.bot.id
        const [userKey] = statesOf(owner.id, conv.id)
        const dup = { id: uid('log'), botId: bot, at: T0, level: 'info', message: 'x', conversationId: conv.id }
        await store.appendBotLogs([dup])
        await expect(store.finishBotTurn({ botId: bot, integrationId: fx.a.id, conversationId: conv.id, seq: 1, now: T0, states: [{ ...userKey!, data: { n: 1 } }], logs: [dup] })).rejects.toThrow()
        expect(await store.getBotStates(bot, [userKey!])).toEqual([undefined])
        expect(await store.getBotCursor(fx.a.id, conv.id)).toEqual({ botSeq: 0, lastSeq: 1 })
      })

      it('finish with patches: only the keys a turn changed are written, onto the state as stored; concurrent turns of other conversations keep each other\'s keys', async () => {
        const bot = fx.bot.id
        const one = await conversation()
        const two = await conversation()
        for (const c of [one, two]) await store.appendMessage(newMessage(fx.a.id, c.conv.id, c.owner.id, T0))
        const botKey = { scope: 'bot' as const, scopeId: '' }
        const userKey = { scope: 'user' as const, scopeId: `${fx.a.id}:${one.owner.id}` }
        await store.saveBotStates(bot, [{ ...botKey, data: JSON.parse('{"kept":1,"gone":2,"__proto__":{"polluted":true}}') as JsonObject }], T0)
        const finish = (c: typeof one, patch: { set: JsonObject; unset: string[] }) => store.finishBotTurn({
          botId: bot, integrationId: fx.a.id, conversationId: c.conv.id, seq: 1, now: T0 + 1, states: [{ ...botKey, patch }, { ...userKey, patch: { set: {}, unset: [] } }], logs: [],
        })
        // two turns finishing at once, each with its own keys (on PostgreSQL, two transactions at once)
        await Promise.all([
          finish(one, { set: { a: { deep: [1] } }, unset: ['gone'] }),
          finish(two, { set: JSON.parse('{"b":null,"__proto__":{"replaced":true}}') as JsonObject, unset: ['no-such-key'] }),
        ])
        const [stored, user] = await store.getBotStates(bot, [botKey, userKey])
        expect(stored).toEqual(JSON.parse('{"kept":1,"__proto__":{"replaced":true},"a":{"deep":[1]},"b":null}'))
        expect(Object.getPrototypeOf(stored)).toBe(Object.prototype)
        // an empty patch writes nothing: no row for a user whose state no turn changed
        expect(user).toBeUndefined()
        // saveBotStates takes patches too
        await store.saveBotStates(bot, [{ ...botKey, patch: { set: { kept: 'changed' }, unset: ['a', 'b', '__proto__'] } }], T0 + 2)
        expect(await store.getBotStates(bot, [botKey])).toEqual([{ kept: 'changed' }])
      })

      it('release: frees the lease for others and answers the cursor, with work that arrived meanwhile', async () => {
        const { owner, conv } = await conversation()
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'one', T0, 60_000)).toEqual({ botSeq: 0, lastSeq: 1 })
        await store.finishBotTurn({ botId: fx.bot.id, integrationId: fx.a.id, conversationId: conv.id, seq: 1, now: T0, states: [], logs: [] })
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        // another owner's release changes nothing
        expect(await store.releaseBotConversation(fx.a.id, conv.id, 'two')).toEqual({ botSeq: 1, lastSeq: 2 })
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1, 1000)).toBeUndefined()
        expect(await store.releaseBotConversation(fx.a.id, conv.id, 'one')).toEqual({ botSeq: 1, lastSeq: 2 })
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1, 1000)).toEqual({ botSeq: 1, lastSeq: 2 })
      })

      it('finish with release: the turn saved and the lease let go in one step, answering the cursor; only its holder\'s', async () => {
        const { owner, conv } = await conversation()
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        const [userKey] = statesOf(owner.id, conv.id)
        const turn = { botId: fx.bot.id, integrationId: fx.a.id, conversationId: conv.id, now: T0, logs: [] }
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'one', T0, 60_000)).toEqual({ botSeq: 0, lastSeq: 1 })
        // without release: nothing answered, the lease still held
        expect(await store.finishBotTurn({ ...turn, seq: 0, states: [] })).toBeUndefined()
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1, 1000)).toBeUndefined()
        // another owner's release lets nothing go, but the turn is saved and the cursor answered
        await store.appendMessage(newMessage(fx.a.id, conv.id, owner.id, T0))
        expect(await store.finishBotTurn({ ...turn, seq: 1, states: [{ ...userKey!, data: { n: 1 } }], release: 'two' })).toEqual({ botSeq: 1, lastSeq: 2 })
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1, 1000)).toBeUndefined()
        // its holder's: saved, let go, work that arrived meanwhile shows in the cursor
        expect(await store.finishBotTurn({ ...turn, seq: 1, states: [{ ...userKey!, data: { n: 2 } }], release: 'one' })).toEqual({ botSeq: 1, lastSeq: 2 })
        expect(await store.getBotStates(fx.bot.id, [userKey!])).toEqual([{ n: 2 }])
        expect(await store.claimBotConversation(fx.a.id, conv.id, 'two', T0 + 1, 1000)).toEqual({ botSeq: 1, lastSeq: 2 })
      })
    })
  })
}
