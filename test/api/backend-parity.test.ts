/**
 * Backend parity (threats T10): the same request gets the same answer on SQLite and PostgreSQL.
 * One Parley on each engine, side by side in this file; every case is sent to both and the
 * statuses (and error types) must match, and never be a 5xx. The inputs are the ones that differ
 * between the engines underneath: NUL characters (PostgreSQL text cannot hold them, SQLite can),
 * lone surrogates, numbers beyond 64-bit integers and doubles, and Unicode keys (normalization
 * forms, astral characters), through bodies, path parameters, query strings and headers.
 *
 * Runs once per test run: in the PostgreSQL pass of the matrix (it starts its own SQLite).
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signHs256 } from '../../src/lib/jwt.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { pgBaseUrl, testStoreKind } from '../helpers/pg.js'

interface Instance {
  h: Harness
  webhookId: string
  userKey: string
  conversationId: string
  admin: Record<string, string>
  files: Record<string, string>
}

type Case = [name: string, request: (i: Instance) => InjectOptions]

const NFC = 'caf\u00e9'
const NFD = 'cafe\u0301'

async function prepare(h: Harness): Promise<Instance> {
  const webhookId = h.credentials.chat.webhookId
  const user = await h.app.inject({ method: 'POST', url: `/${webhookId}/users`, payload: { name: 'Parity' } })
  expect(user.statusCode, user.body).toBe(201)
  const userKey = (user.json() as { key: string }).key
  const conversation = await h.app.inject({
    method: 'POST', url: `/${webhookId}/conversations/get-or-create`, headers: { 'x-user-key': userKey }, payload: { id: 'parity-conversation' },
  })
  expect(conversation.statusCode, conversation.body).toBeLessThan(300)
  return {
    h,
    webhookId,
    userKey,
    conversationId: 'parity-conversation',
    admin: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
    files: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': h.credentials.botId },
  }
}

const chat = (i: Instance, method: InjectOptions['method'], path: string, payload?: unknown, headers: Record<string, string> = {}): InjectOptions => ({
  method, url: `/${i.webhookId}${path}`, headers: { 'x-user-key': i.userKey, ...headers }, ...(payload !== undefined && { payload: payload as object }),
})
const text = (extra: Record<string, unknown> = {}) => ({ payload: { type: 'text', text: 'parity', ...extra } })
const raw = (i: Instance, method: InjectOptions['method'], url: string, body: string, headers: Record<string, string>): InjectOptions => ({
  method, url, headers: { 'content-type': 'application/json', ...headers }, payload: body,
})
const jwt = (i: Instance, id: unknown) => signHs256({ id }, i.h.credentials.chat.encryptionKey)

const PATH_IDS: [string, string][] = [
  ['NUL', '%00'],
  ['embedded NUL', 'a%00b'],
  ['overlong NUL (C0 80)', '%C0%80'],
  ['encoded lone surrogate', '%ED%A0%80'],
  ['astral', encodeURIComponent('😀')],
  ['NFD', encodeURIComponent(NFD)],
  ['2000 characters', 'x'.repeat(2000)],
]

const CASES: Case[] = [
  // ---- path parameters reach lookups directly
  ...PATH_IDS.flatMap(([name, id]): Case[] => [
    [`chat webhook id: ${name}`, () => ({ method: 'GET', url: `/${id}/hello/` })],
    [`chat getConversation: ${name}`, (i) => chat(i, 'GET', `/conversations/${id}`)],
    [`chat getMessage: ${name}`, (i) => chat(i, 'GET', `/messages/${id}`)],
    [`chat getEvent: ${name}`, (i) => chat(i, 'GET', `/events/${id}`)],
    [`chat getParticipant: ${name}`, (i) => chat(i, 'GET', `/conversations/${i.conversationId}/participants/${id}`)],
    [`chat deleteMessage: ${name}`, (i) => chat(i, 'DELETE', `/messages/${id}`)],
    [`admin getBot: ${name}`, (i) => ({ method: 'GET', url: `/v1/admin/bots/${id}`, headers: i.admin })],
    [`admin getWorkspace: ${name}`, (i) => ({ method: 'GET', url: `/v1/admin/workspaces/${id}`, headers: i.admin })],
    [`admin updateWorkspaceMember: ${name}`, (i) => ({ method: 'PUT', url: `/v1/admin/workspace-members/${id}`, headers: i.admin, payload: { role: 'viewer' } })],
    [`admin deletePersonalAccessToken: ${name}`, (i) => ({ method: 'DELETE', url: `/v1/admin/account/pats/${id}`, headers: i.admin })],
    [`files getFile: ${name}`, (i) => ({ method: 'GET', url: `/v1/files/${id}`, headers: i.files })],
    [`files download: ${name}`, (i) => ({ method: 'GET', url: `/v1/files/content/${id}/${id}` })],
    [`files upload token: ${name}`, () => ({ method: 'PUT', url: `/v1/files/uploads/${id}`, headers: { 'content-type': 'text/plain' }, payload: 'x' })],
  ]),

  // ---- query strings
  ...[['NUL', '%00'], ['lone surrogate', '%ED%B0%80'], ['NFD', encodeURIComponent(NFD)], ['astral', encodeURIComponent('😀')]].flatMap(([name, v]): Case[] => [
    [`admin listBots tag value: ${name}`, (i) => ({ method: 'GET', url: `/v1/admin/bots?tags.env=${v}`, headers: i.admin })],
    [`admin listBots tag key: ${name}`, (i) => ({ method: 'GET', url: `/v1/admin/bots?tags.${v}=x`, headers: i.admin })],
    [`files listFiles tag value: ${name}`, (i) => ({ method: 'GET', url: `/v1/files?tags.env=${v}`, headers: i.files })],
    [`files listFiles ids: ${name}`, (i) => ({ method: 'GET', url: `/v1/files?ids=${v}`, headers: i.files })],
    [`chat listMessages nextToken: ${name}`, (i) => chat(i, 'GET', `/conversations/${i.conversationId}/messages?nextToken=${v}`)],
  ]),
  ['admin listBots with a huge limit', (i) => ({ method: 'GET', url: '/v1/admin/bots?limit=1e30', headers: i.admin })],
  ['admin getBotLogs with a leap second (a date-time no Date holds)', (i) => ({ method: 'GET', url: `/v1/admin/bots/${i.h.credentials.botId}/logs?timeStart=2026-12-31T23:59:60Z`, headers: i.admin })],
  ['admin getBotLogs with a timestamp beyond 64 bits', (i) => ({ method: 'GET', url: `/v1/admin/bots/${i.h.credentials.botId}/logs?timeStart=99999999999999999999`, headers: i.admin })],

  // ---- headers
  ['admin x-workspace-id with NUL', (i) => ({ method: 'GET', url: '/v1/admin/bots', headers: { ...i.admin, 'x-workspace-id': 'ws\u0000' } })],
  ['files x-bot-id with NUL', (i) => ({ method: 'GET', url: '/v1/files', headers: { ...i.files, 'x-bot-id': 'bot\u0000' } })],
  ['chat x-user-key JWT whose id has NUL', (i) => chat(i, 'GET', '/users/me', undefined, { 'x-user-key': jwt(i, 'user\u0000') })],
  ['chat x-user-key JWT whose id is a lone surrogate', (i) => chat(i, 'GET', '/users/me', undefined, { 'x-user-key': jwt(i, '\ud800') })],
  ['chat x-user-key JWT whose id is a huge number', (i) => chat(i, 'GET', '/users/me', undefined, { 'x-user-key': jwt(i, 1e400) })],

  // ---- JSON bodies
  ['message text with NUL', (i) => chat(i, 'POST', '/messages', { ...text({ text: 'a\u0000b' }), conversationId: i.conversationId })],
  ['message payload key with NUL', (i) => chat(i, 'POST', '/messages', { ...text(), conversationId: i.conversationId, metadata: { 'k\u0000': 1 } })],
  ['message text with a lone surrogate (escaped)', (i) => raw(i, 'POST', `/${i.webhookId}/messages`, `{"conversationId":"${i.conversationId}","payload":{"type":"text","text":"\\ud800"}}`, { 'x-user-key': i.userKey })],
  ['message text with a raw 0x00 byte', (i) => raw(i, 'POST', `/${i.webhookId}/messages`, `{"conversationId":"${i.conversationId}","payload":{"type":"text","text":"a\u0000b"}}`, { 'x-user-key': i.userKey })],
  ['message metadata number 1e400', (i) => raw(i, 'POST', `/${i.webhookId}/messages`, `{"conversationId":"${i.conversationId}","payload":{"type":"text","text":"x"},"metadata":{"n":1e400}}`, { 'x-user-key': i.userKey })],
  ['message metadata with 2^64 and 1e308 and -0', (i) => raw(i, 'POST', `/${i.webhookId}/messages`, `{"conversationId":"${i.conversationId}","payload":{"type":"text","text":"x"},"metadata":{"a":18446744073709551616,"b":1e308,"c":-0,"d":123456789012345678901234567890}}`, { 'x-user-key': i.userKey })],
  ['location with latitude 1e308', (i) => chat(i, 'POST', '/messages', { conversationId: i.conversationId, payload: { type: 'location', latitude: 1e308, longitude: -1e308 } })],
  ['message with Unicode metadata keys (NFC and NFD both)', (i) => chat(i, 'POST', '/messages', { ...text(), conversationId: i.conversationId, metadata: { [NFC]: 1, [NFD]: 2, '😀': 3, 'ключ': 4 } })],
  ['event with NUL in the payload', (i) => chat(i, 'POST', '/events', { conversationId: i.conversationId, payload: { 'a\u0000': 1 } })],
  ['user name with NUL', (i) => chat(i, 'PUT', '/users/me', { name: 'a\u0000b' })],
  ['user name with a lone surrogate', (i) => chat(i, 'PUT', '/users/me', { name: 'a\udc00b' })],
  ['user profile, astral and NFD', (i) => chat(i, 'PUT', '/users/me', { name: `${NFD} 😀`, profile: '𝕏'.repeat(100) })],
  ['conversation id with NUL', (i) => chat(i, 'POST', '/conversations', { id: 'c\u0000' })],
  ['conversation id NFD', (i) => chat(i, 'POST', '/conversations', { id: NFD })],
  ['bot tags with NUL value', (i) => ({ method: 'PUT', url: `/v1/admin/bots/${i.h.credentials.botId}`, headers: i.admin, payload: { tags: { env: 'a\u0000' } } })],
  ['bot tags with Unicode keys (NFC, NFD, astral)', (i) => ({ method: 'PUT', url: `/v1/admin/bots/${i.h.credentials.botId}`, headers: i.admin, payload: { tags: { [NFC]: 'nfc', [NFD]: 'nfd', '😀': 'astral' } } })],
  ['bot name with a lone surrogate', (i) => ({ method: 'PUT', url: `/v1/admin/bots/${i.h.credentials.botId}`, headers: i.admin, payload: { name: '\ud83d' } })],
  ['workspace name with NUL', (i) => ({ method: 'POST', url: '/v1/admin/workspaces', headers: i.admin, payload: { name: 'w\u0000' } })],
  ['file key with NUL', (i) => ({ method: 'PUT', url: '/v1/files', headers: i.files, payload: { key: 'a\u0000.txt', size: 1 } })],
  ['file key NFD', (i) => ({ method: 'PUT', url: '/v1/files', headers: i.files, payload: { key: `${NFD}.txt`, size: 1 } })],
  ['file tags with Unicode keys', (i) => ({ method: 'PUT', url: '/v1/files', headers: i.files, payload: { key: 'tags.txt', size: 1, tags: { [NFC]: '1', [NFD]: '2', '😀': '3' } } })],
  ['file metadata with 2^64', (i) => raw(i, 'PUT', '/v1/files', '{"key":"big.txt","size":1,"metadata":{"n":18446744073709551616}}', i.files)],
  ['file size beyond 64 bits', (i) => raw(i, 'PUT', '/v1/files', '{"key":"huge.txt","size":99999999999999999999}', i.files)],
  ['file expiresAt far beyond year 9999', (i) => ({ method: 'PUT', url: '/v1/files', headers: i.files, payload: { key: 'exp.txt', size: 1, expiresAt: '+275760-09-13T00:00:00.000Z' } })],
]

const run = testStoreKind() === 'postgres' && pgBaseUrl() !== null

describe.skipIf(!run)('backend parity: SQLite and PostgreSQL answer alike (T10)', () => {
  let sqlite: Instance
  let postgres: Instance

  beforeAll(async () => {
    const [a, b] = await Promise.all([startParley({ store: 'sqlite' }), startParley({ store: 'postgres' })])
    sqlite = await prepare(a)
    postgres = await prepare(b)
  })

  afterAll(async () => {
    await Promise.all([sqlite?.h.close(), postgres?.h.close()])
  })

  const outcome = (res: LightMyRequestResponse) => {
    let type: unknown
    try {
      type = (res.json() as { type?: unknown }).type
    } catch {
      type = undefined
    }
    return { status: res.statusCode, type: res.statusCode >= 400 ? type : undefined }
  }

  it.each(CASES)('%s', async (_name, request) => {
    const [a, b] = [await sqlite.h.app.inject(request(sqlite)), await postgres.h.app.inject(request(postgres))]
    expect(outcome(b), `postgres answered ${b.body}; sqlite answered ${a.body}`).toEqual(outcome(a))
    expect(a.statusCode, a.body).toBeLessThan(500)
  })

  it('what is stored reads back the same: Unicode keys, astral text, big numbers', async () => {
    const send = async (i: Instance) => {
      const created = await i.h.app.inject(chat(i, 'POST', '/messages', {
        conversationId: i.conversationId,
        payload: { type: 'text', text: `${NFC} ${NFD} 😀 \u2028` },
        metadata: { [NFC]: 1, [NFD]: 2, '😀': 3, big: 2 ** 64, tiny: 5e-324, max: Number.MAX_VALUE },
      }))
      expect(created.statusCode, created.body).toBe(201)
      const { message } = created.json() as { message: { id: string } }
      const got = await i.h.app.inject(chat(i, 'GET', `/messages/${message.id}`))
      const body = got.json() as { message: { payload: unknown; metadata: unknown } }
      return JSON.stringify([body.message.payload, body.message.metadata])
    }
    expect(await send(postgres)).toBe(await send(sqlite))
  })
})
