/**
 * The console's sign-in and its Admin API operations (listBotConversations, getBotConversationTranscript,
 * exportBotConversations, createConsoleSignInLink) through app.inject, on both backends: sessions by token or
 * one-time link, the cookie only with the CSRF header, expiry and sign-out, tenancy, search, transcript with logs,
 * and exports streamed page by page (the export page size is lowered so that a small range crosses many pages).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, expectError } from '../helpers/admin-client.js'
import { ChatClient } from '../helpers/chat-client.js'
import { consoleClient, consoleSignIn } from '../helpers/console.js'
import { ARCHIVE_LIMITS } from '../../src/domain/conversation-archive-service.js'
import { hashSecret } from '../../src/lib/crypto.js'
import { parseDelimited } from '../../src/lib/csv.js'

describe('Console: sign-in, conversations and exports', () => {
  let h: Harness
  let chat: ChatClient
  let cookie: string
  let api: ReturnType<typeof consoleClient>
  const words = `zebra${randomUUID().slice(0, 6)}`
  let convA: string
  let convB: string
  let userA: string

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
    const a = await chat.createUser({ name: 'Ada' })
    userA = a.user.id
    convA = (await chat.createConversation(a.key)).id
    await chat.createMessage(a.key, convA, { type: 'text', text: `I saw a ${words} today` })
    await chat.createMessage(a.key, convA, { type: 'text', text: '=HYPERLINK("http://evil")' })
    await chat.createMessage(a.key, convA, { type: 'text', text: 'comma, "quote"\nnewline' })
    const b = await chat.createUser({ name: 'Bob' })
    convB = (await chat.createConversation(b.key)).id
    for (let i = 0; i < 12; i++) await chat.createMessage(b.key, convB, { type: 'text', text: `message ${i}` })
    await h.store.appendBotLogs([{ id: randomUUID(), botId: h.credentials.botId, at: Date.now(), level: 'error', message: 'turn failed: boom', conversationId: convB }])
    const signed = await consoleSignIn(h, { token: h.credentials.token })
    expect(signed.res.status, signed.res.text).toBe(200)
    cookie = signed.cookie!
    api = consoleClient(h, cookie)
  })
  afterAll(async () => h?.close())

  const bot = () => `/v1/admin/bots/${h.credentials.botId}`

  it('signs in with a PAT: an HttpOnly, SameSite=Strict cookie holding an opaque id stored only as a digest', async () => {
    const signed = await consoleSignIn(h, { token: h.credentials.token })
    const set = String(signed.res.headers['set-cookie'])
    expect(set).toMatch(/^parley_console=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/)
    expect(set).not.toContain(h.credentials.token)
    expect(signed.res.body.account.email).toBe('owner@localhost')
    const id = signed.cookie!.split('=')[1]!
    expect(await h.store.consoleSessions.find('session', hashSecret(id), Date.now())).toMatchObject({ kind: 'session' })
    expect(await h.store.consoleSessions.find('session', id, Date.now())).toBeUndefined()
    expect((await api('GET', '/console/session')).body.account.email).toBe('owner@localhost')
  })

  it('refuses a bad token, a bot key, and a sign-in without the console header', async () => {
    expectError((await consoleSignIn(h, { token: 'pat_nope' })).res, 401, 'Unauthorized')
    expectError((await consoleSignIn(h, {})).res, 400, 'InvalidPayload')
    const res = await h.app.inject({ method: 'POST', url: '/console/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ token: h.credentials.token }) })
    expect(res.statusCode).toBe(403)
    expect(res.headers['set-cookie']).toBeUndefined()
  })

  it('the cookie alone authenticates nothing (a cross-site request cannot add the header); with it the member is the caller', async () => {
    expectError(await api('GET', `${bot()}/conversations`, { csrf: false }) as never, 401, 'Unauthorized')
    expectError(await consoleClient(h, undefined)('GET', `${bot()}/conversations`) as never, 401, 'Unauthorized')
    expectError(await consoleClient(h, 'parley_console=forged')('GET', `${bot()}/conversations`) as never, 401, 'Unauthorized')
    expect((await api('GET', '/v1/admin/workspaces')).status).toBe(200)
  })

  it('another origin cannot send the console header: CORS preflights never allow it (and the cookie is SameSite=Strict)', async () => {
    for (const url of [`${bot()}/conversations`, '/console/session']) {
      const pre = await h.app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-parley-console,x-workspace-id' } })
      expect(String(pre.headers['access-control-allow-headers'] ?? '').toLowerCase()).not.toContain('x-parley-console')
    }
  })

  it('a one-time link (createConsoleSignInLink, as `parley console` prints it) signs in once', async () => {
    const admin = adminClient(h)
    const created = await admin('POST', '/account/console-links', { workspaceId: null, body: {} })
    expect(created.status, created.text).toBe(201)
    const url = new URL(created.body.url)
    expect(url.pathname).toBe('/console/')
    const secret = decodeURIComponent(url.hash.replace(/^#link=/, ''))
    const first = await consoleSignIn(h, { link: secret })
    expect(first.res.status, first.res.text).toBe(200)
    expect(first.cookie).toMatch(/^parley_console=/)
    expectError((await consoleSignIn(h, { link: secret })).res, 401, 'Unauthorized')
  })

  it('an expired session is refused; sign-out ends the session', async () => {
    const signed = await consoleSignIn(h, { token: h.credentials.token })
    const id = signed.cookie!.split('=')[1]!
    const own = consoleClient(h, signed.cookie)
    expect((await own('GET', `${bot()}/conversations`)).status).toBe(200)
    // Expire it in the store: the server's clock decides, not the cookie's Max-Age.
    const row = (await h.store.consoleSessions.find('session', hashSecret(id), Date.now()))!
    await h.store.consoleSessions.delete(row.tokenHash)
    await h.store.consoleSessions.create({ ...row, expiresAt: Date.now() - 1 })
    expectError(await own('GET', `${bot()}/conversations`) as never, 401, 'Unauthorized')

    const again = await consoleSignIn(h, { token: h.credentials.token })
    const mine = consoleClient(h, again.cookie)
    const out = await mine('DELETE', '/console/session')
    expect(out.status).toBe(204)
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0')
    expectError(await mine('GET', `${bot()}/conversations`) as never, 401, 'Unauthorized')
  })

  it('another workspace\'s bot answers 404; a member sees only their workspaces', async () => {
    const admin = adminClient(h)
    const ws = await admin('POST', '/workspaces', { workspaceId: null, body: { name: 'other' } })
    const other = consoleClient(h, cookie, ws.body.id as string)
    expectError(await other('GET', `${bot()}/conversations`) as never, 404, 'ResourceNotFound')
    expectError(await other('GET', `${bot()}/conversations/${convA}/transcript`) as never, 404, 'ResourceNotFound')
    expectError(await other('GET', `${bot()}/export?format=csv`) as never, 404, 'ResourceNotFound')
    // A stranger: an account of no workspace but its own.
    const now = Date.now()
    const strangerToken = `pat_${randomUUID().replace(/-/g, '')}`
    const strangerWs = { id: randomUUID(), name: 'stranger', createdAt: now, updatedAt: now }
    await h.store.createWorkspace(strangerWs)
    const acc = { id: randomUUID(), email: `${randomUUID()}@example.test`, displayName: 'Stranger', createdAt: now, updatedAt: now }
    await h.store.createMemberAccount(acc, { id: randomUUID(), accountId: acc.id, note: 't', createdAt: now, tokenHash: hashSecret(strangerToken) }, strangerWs.id, 'owner')
    const s = await consoleSignIn(h, { token: strangerToken })
    const stranger = consoleClient(h, s.cookie, null)
    expect((await stranger('GET', '/v1/admin/workspaces')).body.workspaces.map((w: { id: string }) => w.id)).toEqual([strangerWs.id])
    expectError(await consoleClient(h, s.cookie)('GET', `${bot()}/conversations`) as never, 403, 'Forbidden')
  })

  it('lists conversations newest activity first; finds one by a word, a user id; filters failed turns and dates', async () => {
    const all = await api('GET', `${bot()}/conversations`)
    expect(all.status, all.text).toBe(200)
    const ids = all.body.conversations.map((c: { id: string }) => c.id)
    expect(ids.indexOf(convB)).toBeLessThan(ids.indexOf(convA))
    const byWord = await api('GET', `${bot()}/conversations?q=${words.toUpperCase()}`)
    expect(byWord.body.conversations.map((c: { id: string }) => c.id)).toEqual([convA])
    expect(byWord.body.conversations[0]).toMatchObject({ id: convA, userId: userA, messageCount: 3 })
    expect((await api('GET', `${bot()}/conversations?q=${userA}`)).body.conversations.map((c: { id: string }) => c.id)).toEqual([convA])
    expect((await api('GET', `${bot()}/conversations?q=100%25`)).body.conversations).toEqual([])
    expect((await api('GET', `${bot()}/conversations?failed=true`)).body.conversations.map((c: { id: string }) => c.id)).toEqual([convB])
    // Handed to a person: none yet; then convA, still listed once its handoff has ended
    expect((await api('GET', `${bot()}/conversations?handoff=true`)).body.conversations).toEqual([])
    const started = await api('POST', `${bot()}/handoffs`, { body: { conversationId: convA, reason: 'asked for a person' } })
    expect(started.status, started.text).toBe(200)
    expect((await api('POST', `${bot()}/handoffs/${convA}/end`)).status).toBe(200)
    expect((await api('GET', `${bot()}/conversations?handoff=true`)).body.conversations.map((c: { id: string }) => c.id)).toEqual([convA])
    expect((await api('GET', `${bot()}/conversations?handoff=true&failed=true`)).body.conversations).toEqual([])
    expectError(await api('GET', `${bot()}/conversations?handoff=maybe`) as never, 400, 'InvalidQuery')
    expect((await api('GET', `${bot()}/conversations?to=2000-01-01`)).body.conversations).toEqual([])
    expectError(await api('GET', `${bot()}/conversations?from=yesterday`) as never, 400, 'InvalidQuery')
    expectError(await api('GET', `${bot()}/conversations?nextToken=garbage!`) as never, 400, 'InvalidQuery')
  })

  it('pages the list with nextToken', async () => {
    const limit = ARCHIVE_LIMITS.pageSize
    ARCHIVE_LIMITS.pageSize = 1
    try {
      const first = await api('GET', `${bot()}/conversations`)
      expect(first.body.conversations).toHaveLength(1)
      const second = await api('GET', `${bot()}/conversations?nextToken=${first.body.meta.nextToken}`)
      expect(second.body.conversations[0].id).not.toBe(first.body.conversations[0].id)
    } finally {
      ARCHIVE_LIMITS.pageSize = limit
    }
  })

  it('reads a transcript with its user and the bot\'s logs; an unknown conversation is 404', async () => {
    const t = await api('GET', `${bot()}/conversations/${convB}/transcript`)
    expect(t.status, t.text).toBe(200)
    expect(t.body.messages).toHaveLength(12)
    expect(t.body.messages[0]).toMatchObject({ seq: expect.any(Number), direction: 'incoming', payload: { type: 'text', text: 'message 0' } })
    expect(t.body.users.map((u: { name?: string }) => u.name)).toEqual(['Bob'])
    expect(t.body.logs).toEqual([expect.objectContaining({ level: 'error', message: 'turn failed: boom' })])
    expectError(await api('GET', `${bot()}/conversations/nope/transcript`) as never, 404, 'ResourceNotFound')
  })

  it('exports CSV and JSON Lines, one conversation or a filtered range, across many database pages', async () => {
    const page = ARCHIVE_LIMITS.exportPage
    ARCHIVE_LIMITS.exportPage = 5
    try {
      const csv = await api('GET', `${bot()}/export?format=csv&conversationId=${convA}`)
      expect(csv.status, csv.text).toBe(200)
      expect(csv.headers['content-type']).toContain('text/csv')
      expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="conversations-\d{4}-\d\d-\d\d\.csv"(;|$)/)
      const rows = parseDelimited(csv.text)
      expect(rows[0]).toEqual(['conversationId', 'messageId', 'seq', 'createdAt', 'userId', 'direction', 'type', 'text', 'payload'])
      expect(rows.slice(1).map((r) => r[7])).toEqual([`I saw a ${words} today`, '\'=HYPERLINK("http://evil")', 'comma, "quote"\nnewline'])
      const jsonl = await api('GET', `${bot()}/export?format=json`)
      expect(jsonl.headers['content-type']).toContain('application/x-ndjson')
      const lines = jsonl.text.trim().split('\n').map((l) => JSON.parse(l) as { conversationId: string; seq: number; text: string })
      expect(lines.filter((l) => l.conversationId === convB).map((l) => l.text)).toEqual(Array.from({ length: 12 }, (_, i) => `message ${i}`))
      expect(lines.filter((l) => l.conversationId === convA)).toHaveLength(3)
      const failed = await api('GET', `${bot()}/export?format=json&failed=true`)
      expect(new Set(failed.text.trim().split('\n').map((l) => (JSON.parse(l) as { conversationId: string }).conversationId))).toEqual(new Set([convB]))
      expectError(await api('GET', `${bot()}/export?format=xml`) as never, 400, 'InvalidQuery')
      expectError(await api('GET', `${bot()}/export?format=csv&from=soon`) as never, 400, 'InvalidQuery')
    } finally {
      ARCHIVE_LIMITS.exportPage = page
    }
  })

  it('getBotLogs applies its level and conversationId filters', async () => {
    const logs = await api('GET', `${bot()}/logs?level=error&conversationId=${convB}`)
    expect(logs.body.logs.map((l: { message: string }) => l.message)).toEqual(['turn failed: boom'])
    expect((await api('GET', `${bot()}/logs?conversationId=${convA}`)).body.logs).toEqual([])
  })

  it('serves the page with a strict CSP and the bundle (with uPlot) from Parley itself', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/console/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-security-policy']).toContain("require-trusted-types-for 'script'")
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    const js = await h.app.inject({ method: 'GET', url: '/console/assets/console.js' })
    expect(js.statusCode).toBe(200)
    expect(js.body).toContain('uplot')
    expect((await h.app.inject({ method: 'GET', url: '/console/assets/..%2Fpackage.json' })).statusCode).toBe(404)
    expect((await h.app.inject({ method: 'GET', url: '/console' })).headers.location).toBe('/console/')
  })
})

describe('Console behind an https proxy', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ config: { trustProxy: true } })
  })
  afterAll(async () => h?.close())

  it('marks the session cookie Secure when the request came over https', async () => {
    const res = await h.app.inject({
      method: 'POST', url: '/console/session',
      headers: { 'x-parley-console': '1', 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
      payload: JSON.stringify({ token: h.credentials.token }),
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(String(res.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Secure$/)
    const plain = await consoleSignIn(h, { token: h.credentials.token })
    expect(String(plain.res.headers['set-cookie'])).not.toContain('Secure')
  })
})
