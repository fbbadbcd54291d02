/**
 * Human handoff security (the `agent` role's matrix):
 * - agent vs viewer vs developer on every handoff operation (the inbox's live transcript and attachments too), on
 *   listBots (agents list the workspace's bots, without their url) and on the bot operations an agent must not use;
 * - another workspace's bot and conversation → 404 (never 403, nothing leaks);
 * - assigning a handoff to another member needs manager+ and a member who answers handoffs;
 * - a held handoff: another agent's claim, reply or end → 409 with the Botpress error body;
 * - agents racing for one claim: exactly one wins;
 * - `agent` is accepted in member invites and role updates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, expectError, type Method, type Res } from '../helpers/admin-client.js'
import { handoffFixture, type HandoffFixture } from '../helpers/handoffs.js'

type Role = 'agent' | 'viewer' | 'developer' | 'manager'
const ROLES: Role[] = ['agent', 'viewer', 'developer', 'manager']

describe('handoff security', () => {
  let h: Harness
  let call: ReturnType<typeof adminClient>
  const members = {} as Record<Role, { id: string; token: string }>
  let n = 0
  const email = (p: string) => `${p}-${Date.now().toString(36)}-${++n}@example.com`

  const addMember = async (role: string) => {
    const res = await call('POST', '/workspace-members', { body: { email: email(role), role } })
    expect(res.status, res.text).toBe(201)
    expect(res.body.role).toBe(role)
    return { id: res.body.id as string, token: res.body.pat.value as string }
  }
  const fixture = (options?: { open?: boolean }) => handoffFixture(h, h.credentials.token, h.credentials.workspaceId, options)
  const as = (role: Role, method: Method, path: string, body?: unknown, stream?: boolean): Promise<Res> =>
    call(method, path, { token: members[role].token, ...(body !== undefined && { body }), ...(stream && { stream }) })

  beforeAll(async () => {
    h = await startParley()
    call = adminClient(h)
    for (const role of ROLES) members[role] = await addMember(role)
  })
  afterAll(async () => h?.close())

  /** Each operation on a fresh fixture, and what each role gets. */
  const OPS: { name: string; req: (f: HandoffFixture) => [Method, string, unknown?]; open?: boolean; stream?: boolean; allowed: Role[] }[] = [
    { name: 'listBotHandoffs', req: (f) => ['GET', `/bots/${f.botId}/handoffs`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    { name: 'getBotHandoff', req: (f) => ['GET', `/bots/${f.botId}/handoffs/${f.conversationId}`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    { name: 'getBotHandoffStats', req: (f) => ['GET', `/bots/${f.botId}/handoffs/stats?startDate=2026-01-01&endDate=2026-01-02`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    { name: 'createBotHandoff', open: false, req: (f) => ['POST', `/bots/${f.botId}/handoffs`, { conversationId: f.conversationId }], allowed: ['agent', 'developer', 'manager'] },
    { name: 'claimBotHandoff', req: (f) => ['POST', `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, {}], allowed: ['agent', 'developer', 'manager'] },
    { name: 'createBotHandoffMessage (reply)', req: (f) => ['POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { type: 'text', payload: { text: 'hi' } }], allowed: ['agent', 'developer', 'manager'] },
    { name: 'createBotHandoffMessage (note)', req: (f) => ['POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { note: 'internal' }], allowed: ['agent', 'developer', 'manager'] },
    { name: 'createBotHandoffFileUpload', req: (f) => ['POST', `/bots/${f.botId}/handoffs/${f.conversationId}/files`, { name: 'a.png', contentType: 'image/png', size: 10 }], allowed: ['agent', 'developer', 'manager'] },
    { name: 'endBotHandoff', req: (f) => ['POST', `/bots/${f.botId}/handoffs/${f.conversationId}/end`, {}], allowed: ['agent', 'developer', 'manager'] },
    // The console's conversation reads: an agent reads the conversations it answers (conversations.read)
    { name: 'listBotConversations', req: (f) => ['GET', `/bots/${f.botId}/conversations`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    { name: 'getBotConversationTranscript', req: (f) => ['GET', `/bots/${f.botId}/conversations/${f.conversationId}/transcript`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    { name: 'exportBotConversations', req: (f) => ['GET', `/bots/${f.botId}/export?format=json&conversationId=${f.conversationId}`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    // The inbox's live transcript (SSE).
    { name: 'listenBotConversation', stream: true, req: (f) => ['GET', `/bots/${f.botId}/conversations/${f.conversationId}/listen`], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    // The console's bot picker: an agent lists the workspace's bots (bots.list), without reading them.
    { name: 'listBots', req: () => ['GET', '/bots'], allowed: ['agent', 'viewer', 'developer', 'manager'] },
    // What an agent must not see: bot configuration, logs, analytics, keys, files.
    { name: 'getBot', req: (f) => ['GET', `/bots/${f.botId}`], allowed: ['viewer', 'developer', 'manager'] },
    { name: 'getBotLogs', req: (f) => ['GET', `/bots/${f.botId}/logs`], allowed: ['viewer', 'developer', 'manager'] },
    { name: 'getBotAnalytics', req: (f) => ['GET', `/bots/${f.botId}/analytics?startDate=2026-01-01&endDate=2026-01-02`], allowed: ['viewer', 'developer', 'manager'] },
    { name: 'getBotQualityAnalytics', req: (f) => ['GET', `/bots/${f.botId}/analytics/quality?startDate=2026-01-01&endDate=2026-01-02`], allowed: ['viewer', 'developer', 'manager'] },
    { name: 'updateBot', req: (f) => ['PUT', `/bots/${f.botId}`, { name: 'renamed' }], allowed: ['developer', 'manager'] },
    { name: 'listBotApiKeys', req: (f) => ['GET', `/bots/baks?botId=${f.botId}`], allowed: ['developer', 'manager'] },
  ]

  it.each(OPS.flatMap((op) => ROLES.map((role) => [op.name, role, op.allowed.includes(role), op] as const)))('%s as %s → allowed: %s', async (_name, role, allowed, op) => {
    const f = await fixture({ open: op.open ?? true })
    const [method, path, body] = op.req(f)
    const res = await as(role, method, path, body, op.stream)
    if (allowed) expect(res.status, res.text).toBeLessThan(300)
    else expectError(res, 403, 'Forbidden')
  })

  it('an agent lists its workspace\'s bots (to pick one in the console) without their url, and never another workspace\'s', async () => {
    const remote = await call('POST', '/bots', { body: { name: 'remote for agents', url: 'http://127.0.0.1:9/secret-endpoint' } })
    expect(remote.status, remote.text).toBe(201)
    const otherWs = (await call('POST', '/workspaces', { body: { name: 'other bots' } })).body.id as string
    const foreign = await call('POST', '/bots', { workspaceId: otherWs, body: { name: 'foreign bot' } })
    expect(foreign.status, foreign.text).toBe(201)
    const all = async (role: Role) => {
      const bots: { id: string; name: string; url?: string }[] = []
      let next: string | undefined
      do {
        const page = await as(role, 'GET', `/bots?pageSize=100${next ? `&nextToken=${encodeURIComponent(next)}` : ''}`)
        expect(page.status, page.text).toBe(200)
        bots.push(...page.body.bots)
        next = page.body.meta.nextToken
      } while (next)
      return bots
    }
    const agent = await all('agent')
    const viewer = await all('viewer')
    expect(agent.map((b) => b.id).sort()).toEqual(viewer.map((b) => b.id).sort())
    expect(agent.find((b) => b.id === remote.body.bot.id)).toMatchObject({ name: 'remote for agents' })
    expect(agent.find((b) => b.id === remote.body.bot.id)!.url).toBeUndefined()
    expect(JSON.stringify(agent)).not.toContain('secret-endpoint')
    expect(viewer.find((b) => b.id === remote.body.bot.id)!.url).toBe('http://127.0.0.1:9/secret-endpoint')
    expect(agent.some((b) => b.id === foreign.body.bot.id)).toBe(false)
    // The agent's token on the other workspace: not a member.
    expectError(await call('GET', '/bots', { token: members.agent.token, workspaceId: otherWs }), 403, 'Forbidden')
  })

  it('the agent role cannot use the Files, Tables or Runtime APIs of a bot', async () => {
    const f = await fixture()
    for (const [url, method] of [['/v1/files', 'GET'], ['/v1/tables', 'GET'], [`/v1/chat/conversations/${f.conversationId}`, 'GET']] as const) {
      const res = await h.app.inject({ method, url, headers: { authorization: `Bearer ${members.agent.token}`, 'x-bot-id': f.botId } })
      expect(res.statusCode, `${url}: ${res.body}`).toBe(403)
    }
  })

  it('another workspace: its bots and conversations answer 404, to every role of this one and to its own owner on our ids', async () => {
    const otherWs = (await call('POST', '/workspaces', { body: { name: 'other handoffs' } })).body.id as string
    const theirs = await handoffFixture(h, h.credentials.token, otherWs)
    for (const op of OPS.filter((o) => o.name.includes('Handoff') || o.name === 'listenBotConversation')) {
      const [method, path, body] = op.req(theirs)
      // Our members, with our workspace header, on the other workspace's bot.
      const res = await as('developer', method, path, body, op.stream)
      expectError(res, 404, 'ResourceNotFound')
    }
    // Their conversation under our bot: not found on the live transcript either.
    const mine = await fixture()
    expectError(await as('agent', 'GET', `/bots/${mine.botId}/conversations/${theirs.conversationId}/listen`, undefined, true), 404, 'ResourceNotFound')
    // Our bot's conversation id under their bot: not found either.
    const ours = await fixture()
    const res = await as('developer', 'GET', `/bots/${theirs.botId}/handoffs/${ours.conversationId}`)
    expectError(res, 404, 'ResourceNotFound')
    const wrongBot = await as('developer', 'GET', `/bots/${ours.botId}/handoffs/${theirs.conversationId}`)
    expectError(wrongBot, 404, 'ResourceNotFound')
  })

  it('a held handoff: another agent\'s claim, reply and end answer 409 (error body); a manager may end it', async () => {
    const other = await addMember('agent')
    const f = await fixture()
    expect((await as('agent', 'POST', `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, {})).status).toBe(200)
    // Claiming one's own claim again is fine.
    expect((await as('agent', 'POST', `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, {})).status).toBe(200)
    const byOther = (method: Method, path: string, body: unknown) => call(method, path, { token: other.token, body })
    expectError(await byOther('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, {}), 409, 'ResourceLockedConflict')
    expectError(await byOther('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { type: 'text', payload: { text: 'me too' } }), 409, 'ResourceLockedConflict')
    expectError(await byOther('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/end`, {}), 409, 'ResourceLockedConflict')
    expectError(await byOther('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/files`, { name: 'x.txt', contentType: 'text/plain', size: 1 }), 409, 'ResourceLockedConflict')
    // A note is fine (colleagues comment on a conversation they do not hold).
    expect((await byOther('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { note: 'I know this user' })).status).toBe(200)
    const ended = await as('manager', 'POST', `/bots/${f.botId}/handoffs/${f.conversationId}/end`, {})
    expect(ended.status).toBe(200)
    expect(ended.body.handoff.status).toBe('ended')
    // Ended: nothing open to claim or answer.
    expectError(await as('agent', 'POST', `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, {}), 404, 'ResourceNotFound')
    expectError(await as('agent', 'POST', `/bots/${f.botId}/handoffs/${f.conversationId}/messages`, { type: 'text', payload: { text: 'late' } }), 404, 'ResourceNotFound')
  })

  it('assigning to another member: manager+ only, and only to a member who answers handoffs', async () => {
    const f = await fixture()
    const path = `/bots/${f.botId}/handoffs/${f.conversationId}/claim`
    expectError(await as('agent', 'POST', path, { memberId: members.developer.id }), 403, 'Forbidden')
    expectError(await as('developer', 'POST', path, { memberId: members.agent.id }), 403, 'Forbidden')
    expectError(await as('manager', 'POST', path, { memberId: members.viewer.id }), 400, 'InvalidPayload')
    expectError(await as('manager', 'POST', path, { memberId: 'no-such-member' }), 404, 'ResourceNotFound')
    const assigned = await as('manager', 'POST', path, { memberId: members.agent.id })
    expect(assigned.status, assigned.text).toBe(200)
    expect(assigned.body.handoff.claimedBy.memberId).toBe(members.agent.id)
  })

  it('agents racing for one claim: exactly one wins, the others get 409', async () => {
    const racers = [members.agent, await addMember('agent'), await addMember('agent'), members.developer]
    for (let round = 0; round < 3; round++) {
      const f = await fixture()
      const results = await Promise.all(racers.map((m) => call('POST', `/bots/${f.botId}/handoffs/${f.conversationId}/claim`, { token: m.token, body: {} })))
      expect(results.filter((r) => r.status === 200)).toHaveLength(1)
      for (const r of results.filter((x) => x.status !== 200)) expectError(r, 409, 'ResourceLockedConflict')
      const winner = racers[results.findIndex((r) => r.status === 200)]!
      expect((await call('GET', `/bots/${f.botId}/handoffs/${f.conversationId}`)).body.handoff.claimedBy.memberId).toBe(winner.id)
    }
  })

  it('the agent role in member invites and role updates', async () => {
    const m = await addMember('viewer')
    const updated = await call('PUT', `/workspace-members/${m.id}`, { body: { role: 'agent' } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body.role).toBe('agent')
    // An agent may not manage members.
    expectError(await as('agent', 'POST', '/workspace-members', { email: email('x'), role: 'agent' }), 403, 'Forbidden')
    expect((await as('agent', 'GET', '/workspace-members')).status).toBe(200)
  })

  it('a Chat API user cannot forge a handoff event: a custom event with that payload is a custom event', async () => {
    const f = await fixture({ open: false })
    const res = await h.app.inject({
      method: 'POST', url: `/${f.webhookId}/events`, headers: { 'x-user-key': f.userKey },
      payload: { conversationId: f.conversationId, payload: { type: 'handoff_started', handoffId: 'x' } },
    })
    expect(res.statusCode, res.body).toBe(201)
    // No handoff exists for the conversation.
    expectError(await call('GET', `/bots/${f.botId}/handoffs/${f.conversationId}`), 404, 'ResourceNotFound')
  })
})
