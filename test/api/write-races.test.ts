/**
 * A write racing a delete of its bot or workspace (issue #24, item 7): the service checked that the parent exists,
 * the parent is deleted, then the service writes. The database refuses the row (a foreign-key violation on both
 * engines); the answer is 404 ResourceNotFound in the Botpress error body, never a 5xx. The interleaving is forced
 * at a store seam (test/helpers/races.ts), so each case takes that path on every run.
 */
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { parseJson } from '../helpers/admin-client.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { beforeNextCall, chatUserKey, deleteRaceBot, expectGone, newChatBot, type RaceBot } from '../helpers/races.js'
import { tableName } from '../helpers/tables.js'

interface Op {
  name: string
  /** Fixtures the request needs, made before the seam (a chat user's key, a table). */
  prepare?: (h: Harness, bot: RaceBot) => Promise<Record<string, string>>
  /** The store method the service writes with, where the delete is slipped in. */
  seam: (store: KyselyStore) => [object, string]
  request: (h: Harness, bot: RaceBot, fixture: Record<string, string>) => InjectOptions
  /** What the 404 names on PostgreSQL (its foreign key names the parent); SQLite's error names no constraint. */
  parent: RegExp
}

const member = (h: Harness, bot: RaceBot) => ({ authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': bot.botId })

async function chatUser(h: Harness, bot: RaceBot): Promise<Record<string, string>> {
  return { key: await chatUserKey(h, bot) }
}

async function table(h: Harness, bot: RaceBot): Promise<Record<string, string>> {
  const name = tableName()
  const res = await h.app.inject({ method: 'POST', url: '/v1/tables', headers: member(h, bot), payload: { name, schema: { type: 'object', properties: { a: { type: 'string' } } } } })
  if (res.statusCode !== 200) throw new Error(`createTable: ${res.body}`)
  return { table: name }
}

const OPS: Op[] = [
  {
    name: 'Files upsertFile',
    seam: (s) => [s.files, 'upsertFile'],
    request: (h, bot) => ({ method: 'PUT', url: '/v1/files', headers: member(h, bot), payload: { key: 'race.txt', size: 3 } }),
    parent: /bot/,
  },
  {
    name: 'webchat createFileUpload',
    prepare: chatUser,
    seam: (s) => [s.files, 'upsertFile'],
    request: (_h, bot, f) => ({ method: 'POST', url: `/${bot.webhookId}/files`, headers: { 'x-user-key': f.key! }, payload: { name: 'a.png', contentType: 'image/png', size: 3 } }),
    parent: /bot/,
  },
  {
    name: 'Chat createUser',
    seam: (s) => [s, 'createUser'],
    request: (_h, bot) => ({ method: 'POST', url: `/${bot.webhookId}/users`, payload: {} }),
    parent: /integration/,
  },
  {
    name: 'Runtime createUser',
    seam: (s) => [s.botChat, 'createUser'],
    request: (h, bot) => ({ method: 'POST', url: '/v1/chat/users', headers: member(h, bot), payload: { tags: {} } }),
    parent: /integration/,
  },
  {
    name: 'Runtime createConversation',
    seam: (s) => [s.botChat, 'createConversation'],
    request: (h, bot) => ({ method: 'POST', url: '/v1/chat/conversations', headers: member(h, bot), payload: { channel: 'channel', tags: {} } }),
    parent: /integration/,
  },
  {
    name: 'Tables createTable',
    seam: (s) => [s.tables, 'createTable'],
    request: (h, bot) => ({ method: 'POST', url: '/v1/tables', headers: member(h, bot), payload: { name: tableName(), schema: { type: 'object', properties: { a: { type: 'string' } } } } }),
    parent: /bot/,
  },
  {
    name: 'Tables createTableRows',
    prepare: table,
    seam: (s) => [s.tables, 'insertRows'],
    request: (h, bot, f) => ({ method: 'POST', url: `/v1/tables/${f.table!}/rows`, headers: member(h, bot), payload: { rows: [{ a: 'x' }] } }),
    parent: /table/,
  },
]

describe('a write racing the delete of its bot or workspace answers 404', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  for (const parent of ['bot', 'workspace'] as const) {
    for (const op of OPS) {
      it(`${op.name}, its ${parent} deleted between the service's checks and its insert`, async () => {
        const bot = await newChatBot(h, parent === 'workspace')
        const fixture = (await op.prepare?.(h, bot)) ?? {}
        const [target, method] = op.seam(h.store)
        const seam = beforeNextCall(target, method as never, () => deleteRaceBot(h, bot, parent))
        const res = await h.app.inject(op.request(h, bot, fixture))
        expect(seam.ran(), 'the request reached the store seam').toBe(true)
        expectGone({ status: res.statusCode, body: parseJson(res.body), text: res.body }, h.storeKind === 'postgres' ? op.parent : /no longer exists/)
      })
    }
  }
})

describe('the listed writes running concurrently with the delete of their bot', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  // Not timing-dependent in what it asserts: whichever way each write and the delete interleave, no answer may be a
  // 5xx (a write that lost the race is 404, or 401/403 once the bot's access is gone). The counts are in the message.
  it('answers no 5xx over 12 rounds of the 7 operations x 3 against a bot being deleted', async () => {
    const counts = new Map<number, number>()
    for (let round = 0; round < 12; round++) {
      const bot = await newChatBot(h)
      const fixture = { ...(await chatUser(h, bot)), ...(await table(h, bot)) }
      const writes = OPS.flatMap((op) => [0, 1, 2].map(() => h.app.inject(op.request(h, bot, fixture))))
      const deleting = deleteRaceBot(h, bot, 'bot')
      for (const res of await Promise.all(writes)) counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1)
      await deleting
    }
    const summary = JSON.stringify(Object.fromEntries(counts))
    expect([...counts.keys()].filter((status) => status >= 500), summary).toEqual([])
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(12 * OPS.length * 3)
  })
})

