/**
 * Admin API through app.inject: the caller's account, personal access tokens and workspaces
 * (getAccount, create/list/deletePersonalAccessToken, list/create/get/update/deleteWorkspace).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, expectError, ISO_Z, type Res } from '../helpers/admin-client.js'

describe('Admin API: account and personal access tokens', () => {
  let h: Harness
  let admin: ReturnType<typeof adminClient>

  beforeAll(async () => {
    h = await startParley()
    admin = adminClient(h)
  })
  afterAll(async () => h?.close())

  it('getAccount returns the account that owns the token, without needing x-workspace-id', async () => {
    const res = await admin('GET', '/account/me', { workspaceId: null })
    expect(res.status, res.text).toBe(200)
    expect(Object.keys(res.body)).toEqual(['account'])
    expect(res.body.account).toEqual({
      id: expect.any(String),
      email: 'owner@localhost',
      displayName: 'Owner',
      emailVerified: false,
      createdAt: expect.stringMatching(ISO_Z),
    })
  })

  it('createPersonalAccessToken shows the value once (201); the new token works; the list never contains values', async () => {
    const created = await admin('POST', '/account/pats', { workspaceId: null, body: { note: 'ci token' } })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toEqual({
      pat: { id: expect.any(String), createdAt: expect.stringMatching(ISO_Z), note: 'ci token', value: expect.stringMatching(/^pat_/) },
    })
    const { id, value } = created.body.pat as { id: string; value: string }

    const me = await admin('GET', '/account/me', { token: value, workspaceId: null })
    expect(me.status).toBe(200)
    expect(me.body.account.email).toBe('owner@localhost')

    const list = await admin('GET', '/account/pats', { workspaceId: null })
    expect(list.status).toBe(200)
    expect(Object.keys(list.body)).toEqual(['pats'])
    const entry = (list.body.pats as { id: string }[]).find((p) => p.id === id)
    expect(entry).toEqual({ id, createdAt: created.body.pat.createdAt, note: 'ci token' })
    for (const pat of list.body.pats as Record<string, unknown>[]) expect(Object.keys(pat).sort()).toEqual(['createdAt', 'id', 'note'])
    // Neither the new value nor the bootstrap token appears anywhere in the listing.
    expect(list.text).not.toContain(value)
    expect(list.text).not.toContain(h.credentials.token)
    expect(list.text).not.toMatch(/pat_/)
  })

  it('deletePersonalAccessToken revokes: the revoked token then gets 401, others keep working', async () => {
    const created = await admin('POST', '/account/pats', { workspaceId: null, body: { note: 'to revoke' } })
    const { id, value } = created.body.pat as { id: string; value: string }
    expect((await admin('GET', '/bots', { token: value })).status).toBe(200)

    const del = await admin('DELETE', `/account/pats/${id}`, { workspaceId: null })
    expect(del.status, del.text).toBe(200)
    expect(del.body).toEqual({})

    expectError(await admin('GET', '/account/me', { token: value, workspaceId: null }), 401, 'Unauthorized')
    expectError(await admin('GET', '/bots', { token: value }), 401, 'Unauthorized')
    const list = await admin('GET', '/account/pats', { workspaceId: null })
    expect((list.body.pats as { id: string }[]).map((p) => p.id)).not.toContain(id)
    expect((await admin('GET', '/account/me', { workspaceId: null })).status).toBe(200)

    // Revoking twice, or an unknown id: 404.
    expectError(await admin('DELETE', `/account/pats/${id}`, { workspaceId: null }), 404, 'ResourceNotFound')
    expectError(await admin('DELETE', '/account/pats/no-such-token', { workspaceId: null }), 404, 'ResourceNotFound')
  })

  it('a token can revoke itself', async () => {
    const created = await admin('POST', '/account/pats', { workspaceId: null, body: { note: 'self' } })
    const { id, value } = created.body.pat as { id: string; value: string }
    expect((await admin('DELETE', `/account/pats/${id}`, { token: value, workspaceId: null })).status).toBe(200)
    expectError(await admin('GET', '/account/me', { token: value, workspaceId: null }), 401, 'Unauthorized')
  })

  it('another account cannot see or revoke my tokens (404, nothing revoked)', async () => {
    const member = await admin('POST', '/workspace-members', { body: { email: 'pat-other@example.com', role: 'viewer' } })
    expect(member.status, member.text).toBe(201)
    const otherToken = member.body.pat.value as string
    const mine = await admin('POST', '/account/pats', { workspaceId: null, body: { note: 'mine' } })
    const { id, value } = mine.body.pat as { id: string; value: string }

    const theirList = await admin('GET', '/account/pats', { token: otherToken, workspaceId: null })
    expect(theirList.status).toBe(200)
    expect((theirList.body.pats as { id: string }[]).map((p) => p.id)).not.toContain(id)
    expectError(await admin('DELETE', `/account/pats/${id}`, { token: otherToken, workspaceId: null }), 404, 'ResourceNotFound')
    expect((await admin('GET', '/account/me', { token: value, workspaceId: null })).status).toBe(200)
  })

  it('createPersonalAccessToken validates its body (400 InvalidPayload)', async () => {
    expectError(await admin('POST', '/account/pats', { workspaceId: null, body: {} }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/account/pats', { workspaceId: null, body: { note: '' } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/account/pats', { workspaceId: null, body: { note: 'x'.repeat(201) } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/account/pats', { workspaceId: null, body: { note: 'ok', extra: 1 } }), 400, 'InvalidPayload')
  })
})

describe('Admin API: workspaces', () => {
  let h: Harness
  let admin: ReturnType<typeof adminClient>
  let ownerId: string

  beforeAll(async () => {
    h = await startParley()
    admin = adminClient(h)
    ownerId = (await admin('GET', '/account/me', { workspaceId: null })).body.account.id
  })
  afterAll(async () => h?.close())

  const workspaceShape = (name: string) => ({
    id: expect.any(String),
    name,
    ownerId: expect.any(String),
    createdAt: expect.stringMatching(ISO_Z),
    updatedAt: expect.stringMatching(ISO_Z),
    botCount: expect.any(Number),
    billingVersion: expect.any(String),
    plan: expect.any(String),
    blocked: false,
    spendingLimit: expect.any(Number),
    activeTrialId: null,
  })

  it('listWorkspaces lists the bootstrap workspace with its owner and bot count', async () => {
    const res = await admin('GET', '/workspaces', { workspaceId: null })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ workspaces: [workspaceShape('Default workspace')], meta: {} })
    expect(res.body.workspaces[0]).toMatchObject({ id: h.credentials.workspaceId, ownerId, botCount: 1 })
  })

  it('createWorkspace returns 201; the creator is its owner; it appears in listWorkspaces and getWorkspace', async () => {
    const created = await admin('POST', '/workspaces', { workspaceId: null, body: { name: 'Team A' } })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toEqual(workspaceShape('Team A'))
    expect(created.body).toMatchObject({ ownerId, botCount: 0 })
    const id = created.body.id as string

    const me = await admin('GET', '/workspace-members/me', { workspaceId: id })
    expect(me.status, me.text).toBe(200)
    expect(me.body).toMatchObject({ id: ownerId, role: 'owner', email: 'owner@localhost' })
    const members = await admin('GET', '/workspace-members', { workspaceId: id })
    expect(members.body.members).toEqual([expect.objectContaining({ id: ownerId, role: 'owner' })])

    const got = await admin('GET', `/workspaces/${id}`, { workspaceId: null })
    expect(got.status).toBe(200)
    expect(got.body).toEqual(created.body)

    const list = await admin('GET', '/workspaces', { workspaceId: null })
    expect((list.body.workspaces as { id: string }[]).map((w) => w.id)).toContain(id)
  })

  it('listWorkspaces pages with pageSize and nextToken without repeats', async () => {
    for (let i = 0; i < 4; i++) expect((await admin('POST', '/workspaces', { workspaceId: null, body: { name: `Paged ${i}` } })).status).toBe(201)
    const all = (await admin('GET', '/workspaces?pageSize=100', { workspaceId: null })).body.workspaces as { id: string }[]
    const seen: string[] = []
    let next: string | undefined
    do {
      const res = await admin('GET', `/workspaces?pageSize=2${next ? `&nextToken=${encodeURIComponent(next)}` : ''}`, { workspaceId: null })
      expect(res.status, res.text).toBe(200)
      expect(res.body.workspaces.length).toBeLessThanOrEqual(2)
      seen.push(...(res.body.workspaces as { id: string }[]).map((w) => w.id))
      next = res.body.meta.nextToken
    } while (next)
    expect(seen).toEqual(all.map((w) => w.id))
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.length).toBeGreaterThanOrEqual(5)
    expectError(await admin('GET', '/workspaces?nextToken=garbage!!', { workspaceId: null }), 400, 'InvalidQuery')
    expectError(await admin('GET', '/workspaces?pageSize=0', { workspaceId: null }), 400, 'InvalidQuery')
    expectError(await admin('GET', '/workspaces?pageSize=101', { workspaceId: null }), 400, 'InvalidQuery')
  })

  it('updateWorkspace renames and bumps updatedAt; botCount follows the bots', async () => {
    const created = (await admin('POST', '/workspaces', { workspaceId: null, body: { name: 'Before' } })).body
    await new Promise((r) => setTimeout(r, 5))
    const bot = await admin('POST', '/bots', { workspaceId: created.id, body: { name: 'b' } })
    expect(bot.status).toBe(201)
    const updated = await admin('PUT', `/workspaces/${created.id}`, { workspaceId: null, body: { name: 'After' } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ id: created.id, name: 'After', createdAt: created.createdAt, botCount: 1, ownerId })
    expect(Date.parse(updated.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt))
    expect((await admin('GET', `/workspaces/${created.id}`, { workspaceId: null })).body.name).toBe('After')
    // An empty body changes nothing.
    const same = await admin('PUT', `/workspaces/${created.id}`, { workspaceId: null, body: {} })
    expect(same.status).toBe(200)
    expect(same.body.name).toBe('After')
    expectError(await admin('PUT', `/workspaces/${created.id}`, { workspaceId: null, body: { name: '' } }), 400, 'InvalidPayload')
  })

  it('createWorkspace validates its body', async () => {
    expectError(await admin('POST', '/workspaces', { workspaceId: null, body: {} }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/workspaces', { workspaceId: null, body: { name: '' } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/workspaces', { workspaceId: null, body: { name: 'x'.repeat(201) } }), 400, 'InvalidPayload')
  })

  it('unknown workspace ids are 404 on get/update/delete', async () => {
    expectError(await admin('GET', '/workspaces/no-such-workspace', { workspaceId: null }), 404, 'ResourceNotFound')
    expectError(await admin('PUT', '/workspaces/no-such-workspace', { workspaceId: null, body: { name: 'x' } }), 404, 'ResourceNotFound')
    expectError(await admin('DELETE', '/workspaces/no-such-workspace', { workspaceId: null }), 404, 'ResourceNotFound')
  })

  it('deleteWorkspace removes it, its memberships and its bots with their chat webhooks and data', async () => {
    const ws = (await admin('POST', '/workspaces', { workspaceId: null, body: { name: 'Doomed' } })).body.id as string
    const botIds: string[] = []
    const webhookIds: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await admin('POST', '/bots', { workspaceId: ws, body: { name: `doomed-${i}` } })
      expect(res.status).toBe(201)
      botIds.push(res.body.bot.id)
      webhookIds.push(res.body.bot.integrations.chat.webhookId)
    }
    const integrationId = (await h.store.getIntegrationByWebhookId(webhookIds[0]!))!.id
    // Some chat data on the first bot.
    const user = await h.app.inject({ method: 'POST', url: `/${webhookIds[0]}/users`, payload: {} })
    expect(user.statusCode, user.body).toBe(201)
    const key = user.json().key as string
    const userId = user.json().user.id as string
    const conv = await h.app.inject({ method: 'POST', url: `/${webhookIds[0]}/conversations`, headers: { 'x-user-key': key }, payload: {} })
    expect(conv.statusCode).toBe(201)
    const member = await admin('POST', '/workspace-members', { workspaceId: ws, body: { email: 'doomed-member@example.com', role: 'developer' } })
    expect(member.status).toBe(201)
    const memberToken = member.body.pat.value as string

    const del = await admin('DELETE', `/workspaces/${ws}`, { workspaceId: null })
    expect(del.status, del.text).toBe(200)
    expect(del.body).toEqual({})

    expectError(await admin('GET', `/workspaces/${ws}`, { workspaceId: null }), 404, 'ResourceNotFound')
    expect((await admin('GET', '/workspaces?pageSize=100', { workspaceId: null })).body.workspaces.map((w: { id: string }) => w.id)).not.toContain(ws)
    // The workspace id no longer authenticates workspace routes.
    expectError(await admin('GET', '/bots', { workspaceId: ws }), 401, 'Unauthorized')
    for (const id of botIds) expect(await h.store.getBot(id)).toBeUndefined()
    for (const webhookId of webhookIds) {
      expect(await h.store.getIntegrationByWebhookId(webhookId)).toBeUndefined()
      expect((await h.app.inject({ method: 'GET', url: `/${webhookId}/hello/` })).statusCode).toBe(404)
    }
    expect(await h.store.getUser(integrationId, userId)).toBeUndefined()
    expect(await h.store.getConversation(integrationId, conv.json().conversation.id)).toBeUndefined()
    // The member's account survives (it is an account, not a workspace resource), but sees no workspace.
    const theirs = await admin('GET', '/workspaces', { token: memberToken, workspaceId: null })
    expect(theirs.status).toBe(200)
    expect(theirs.body.workspaces).toEqual([])
    // Other workspaces are untouched.
    expect((await admin('GET', `/bots/${h.credentials.botId}`)).status).toBe(200)
  })
})
