/**
 * Admin API through app.inject: workspace members (list/get/create/update/deleteWorkspaceMember),
 * including accounts created by email, duplicate members, the last-owner rule and leaving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, expectError, ISO_Z, type Res } from '../helpers/admin-client.js'

let seq = 0
const email = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}@example.com`

describe('Admin API: workspace members', () => {
  let h: Harness
  let admin: ReturnType<typeof adminClient>
  let ownerId: string

  /** A fresh workspace owned by the bootstrap owner. */
  async function newWorkspace(name = 'members'): Promise<string> {
    const res = await admin('POST', '/workspaces', { workspaceId: null, body: { name } })
    expect(res.status, res.text).toBe(201)
    return res.body.id
  }

  async function addMember(workspaceId: string, role: string, address = email(role)): Promise<{ id: string; token: string; email: string }> {
    const res = await admin('POST', '/workspace-members', { workspaceId, body: { email: address, role } })
    expect(res.status, res.text).toBe(201)
    return { id: res.body.id, token: res.body.pat?.value, email: address }
  }

  beforeAll(async () => {
    h = await startParley()
    admin = adminClient(h)
    ownerId = (await admin('GET', '/account/me', { workspaceId: null })).body.account.id
  })
  afterAll(async () => h?.close())

  it('listWorkspaceMembers lists the owner; getWorkspaceMember returns the caller\'s membership', async () => {
    const list = await admin('GET', '/workspace-members')
    expect(list.status, list.text).toBe(200)
    expect(list.body).toEqual({
      members: [{ id: ownerId, userId: ownerId, email: 'owner@localhost', displayName: 'Owner', createdAt: expect.stringMatching(ISO_Z), role: 'owner' }],
      meta: {},
    })
    const me = await admin('GET', '/workspace-members/me')
    expect(me.status).toBe(200)
    expect(me.body).toEqual(list.body.members[0])
  })

  it('createWorkspaceMember with a new email creates an account and returns pat.value, a usable token for it', async () => {
    const ws = await newWorkspace()
    const address = email('newcomer')
    const res = await admin('POST', '/workspace-members', { workspaceId: ws, body: { email: address, role: 'developer' } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({
      id: expect.any(String),
      userId: expect.any(String),
      email: address,
      displayName: address.split('@')[0],
      createdAt: expect.stringMatching(ISO_Z),
      role: 'developer',
      pat: { id: expect.any(String), createdAt: expect.stringMatching(ISO_Z), note: expect.any(String), value: expect.stringMatching(/^pat_/) },
    })
    expect(res.body.userId).toBe(res.body.id)
    const token = res.body.pat.value as string

    const account = await admin('GET', '/account/me', { token, workspaceId: null })
    expect(account.status).toBe(200)
    expect(account.body.account).toMatchObject({ id: res.body.id, email: address })
    const me = await admin('GET', '/workspace-members/me', { token, workspaceId: ws })
    expect(me.body).toMatchObject({ id: res.body.id, role: 'developer' })
    // The token works for what a developer may do, in that workspace only.
    expect((await admin('POST', '/bots', { token, workspaceId: ws, body: { name: 'dev bot' } })).status).toBe(201)
    expectError(await admin('GET', '/bots', { token, workspaceId: h.credentials.workspaceId }), 403, 'Forbidden')
    const theirWorkspaces = await admin('GET', '/workspaces', { token, workspaceId: null })
    expect(theirWorkspaces.body.workspaces.map((w: { id: string }) => w.id)).toEqual([ws])
    // The token is listed (without its value) among the new account's tokens.
    const pats = await admin('GET', '/account/pats', { token, workspaceId: null })
    expect(pats.body.pats).toEqual([{ id: res.body.pat.id, createdAt: res.body.pat.createdAt, note: res.body.pat.note }])
  })

  it('emails are case-insensitive: the address is stored lower-case and the same account is found again', async () => {
    const ws1 = await newWorkspace()
    const ws2 = await newWorkspace()
    const address = email('MixedCase').replace('example', 'Example')
    const first = await admin('POST', '/workspace-members', { workspaceId: ws1, body: { email: address, role: 'viewer' } })
    expect(first.status, first.text).toBe(201)
    expect(first.body.email).toBe(address.toLowerCase())
    const second = await admin('POST', '/workspace-members', { workspaceId: ws2, body: { email: address.toUpperCase(), role: 'viewer' } })
    expect(second.status, second.text).toBe(201)
    expect(second.body.id).toBe(first.body.id)
    expect(second.body.pat).toBeUndefined()
  })

  it('adding an existing account to another workspace reuses it (no new token); adding an existing member is 409 AlreadyExists', async () => {
    const ws1 = await newWorkspace()
    const ws2 = await newWorkspace()
    const m = await addMember(ws1, 'viewer')
    const again = await admin('POST', '/workspace-members', { workspaceId: ws2, body: { email: m.email, role: 'manager' } })
    expect(again.status, again.text).toBe(201)
    expect(again.body).toMatchObject({ id: m.id, email: m.email, role: 'manager' })
    expect(again.body.pat).toBeUndefined()
    // The first token now reaches both workspaces with the right roles.
    expect((await admin('GET', '/workspace-members/me', { token: m.token, workspaceId: ws2 })).body.role).toBe('manager')
    expect((await admin('GET', '/workspace-members/me', { token: m.token, workspaceId: ws1 })).body.role).toBe('viewer')

    expectError(await admin('POST', '/workspace-members', { workspaceId: ws1, body: { email: m.email, role: 'viewer' } }), 409, 'AlreadyExists')
    expectError(await admin('POST', '/workspace-members', { workspaceId: ws1, body: { email: m.email.toUpperCase(), role: 'developer' } }), 409, 'AlreadyExists')
    // Role unchanged by the failed attempts.
    expect((await admin('GET', '/workspace-members/me', { token: m.token, workspaceId: ws1 })).body.role).toBe('viewer')
  })

  // Found by the fuzz suite's concurrent property (issue #13): both requests saw no account (or no
  // membership) and both inserted it; the loser hit the unique key and answered 500.
  it('the same new email added several times at once: one 201 with the first token, the others 409 AlreadyExists, one account', async () => {
    const ws = await newWorkspace()
    const address = `race-${Date.now().toString(36)}@example.test`
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      admin('POST', '/workspace-members', { workspaceId: ws, body: { email: i % 2 === 0 ? address : address.toUpperCase(), role: 'viewer' } })))
    const created = results.filter((r) => r.status === 201)
    expect(created, results.map((r) => r.text).join('\n')).toHaveLength(1)
    for (const r of results.filter((x) => x !== created[0])) expectError(r, 409, 'AlreadyExists')
    expect(created[0]!.body.pat?.value).toEqual(expect.any(String))
    const listed = await admin('GET', '/workspace-members?pageSize=100', { workspaceId: ws })
    expect(listed.body.members.filter((m: { email: string }) => m.email === address)).toHaveLength(1)

    // An existing account added to another workspace at once: one membership, the others 409.
    const ws2 = await newWorkspace()
    const again = await Promise.all(Array.from({ length: 6 }, () => admin('POST', '/workspace-members', { workspaceId: ws2, body: { email: address, role: 'developer' } })))
    expect(again.filter((r) => r.status === 201), again.map((r) => r.text).join('\n')).toHaveLength(1)
    for (const r of again.filter((x) => x.status !== 201)) expectError(r, 409, 'AlreadyExists')
  })

  it('the bootstrap owner (owner@localhost) can be added by email to a workspace someone else owns, and re-adding it is 409', async () => {
    // Another account creates its own workspace and invites the bootstrap owner by its email.
    const other = await addMember(await newWorkspace(), 'viewer')
    const theirs = await admin('POST', '/workspaces', { token: other.token, workspaceId: null, body: { name: 'theirs' } })
    expect(theirs.status).toBe(201)
    const invite = await admin('POST', '/workspace-members', { token: other.token, workspaceId: theirs.body.id, body: { email: 'owner@localhost', role: 'viewer' } })
    expect(invite.status, invite.text).toBe(201)
    expect(invite.body).toMatchObject({ id: ownerId, email: 'owner@localhost', role: 'viewer' })
    expect(invite.body.pat).toBeUndefined()
    expectError(await admin('POST', '/workspace-members', { body: { email: 'owner@localhost', role: 'viewer' } }), 409, 'AlreadyExists')
  })

  it('createWorkspaceMember validates email and role (400 InvalidPayload)', async () => {
    expectError(await admin('POST', '/workspace-members', { body: { email: 'not-an-email', role: 'viewer' } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/workspace-members', { body: { email: email('x'), role: 'superuser' } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/workspace-members', { body: { email: email('x') } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/workspace-members', { body: { role: 'viewer' } }), 400, 'InvalidPayload')
    expectError(await admin('POST', '/workspace-members', { body: { email: email('x'), role: 'viewer', admin: true } }), 400, 'InvalidPayload')
  })

  it('listWorkspaceMembers pages with pageSize', async () => {
    const ws = await newWorkspace()
    const added = [] as string[]
    for (let i = 0; i < 5; i++) added.push((await addMember(ws, 'viewer')).id)
    const ids: string[] = []
    let next: string | undefined
    let pages = 0
    do {
      const res = await admin('GET', `/workspace-members?pageSize=2${next ? `&nextToken=${encodeURIComponent(next)}` : ''}`, { workspaceId: ws })
      expect(res.status, res.text).toBe(200)
      expect(res.body.members.length).toBeLessThanOrEqual(2)
      ids.push(...res.body.members.map((m: { id: string }) => m.id))
      next = res.body.meta.nextToken
      pages++
    } while (next)
    expect(pages).toBe(3)
    expect(ids.sort()).toEqual([ownerId, ...added].sort())
    expectError(await admin('GET', '/workspace-members?nextToken=%%%', { workspaceId: ws }), 400, 'InvalidQuery')
    expectError(await admin('GET', '/workspace-members?pageSize=0', { workspaceId: ws }), 400, 'InvalidQuery')
    expectError(await admin('GET', '/workspace-members?pageSize=101', { workspaceId: ws }), 400, 'InvalidQuery')
  })

  it('updateWorkspaceMember changes a role, which takes effect at once', async () => {
    const ws = await newWorkspace()
    const m = await addMember(ws, 'viewer')
    expectError(await admin('POST', '/bots', { token: m.token, workspaceId: ws, body: {} }), 403, 'Forbidden')
    const res = await admin('PUT', `/workspace-members/${m.id}`, { workspaceId: ws, body: { role: 'developer' } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ id: m.id, email: m.email, role: 'developer' })
    expect((await admin('POST', '/bots', { token: m.token, workspaceId: ws, body: {} })).status).toBe(201)
    const listed = (await admin('GET', '/workspace-members', { workspaceId: ws })).body.members.find((x: { id: string }) => x.id === m.id)
    expect(listed.role).toBe('developer')
    // No role: unchanged.
    const noop = await admin('PUT', `/workspace-members/${m.id}`, { workspaceId: ws, body: {} })
    expect(noop.status).toBe(200)
    expect(noop.body.role).toBe('developer')
    expectError(await admin('PUT', `/workspace-members/${m.id}`, { workspaceId: ws, body: { role: 'god' } }), 400, 'InvalidPayload')
    expectError(await admin('PUT', '/workspace-members/no-such-member', { workspaceId: ws, body: { role: 'viewer' } }), 404, 'ResourceNotFound')
    // A member of another workspace is not a member here.
    const elsewhere = await addMember(await newWorkspace(), 'viewer')
    expectError(await admin('PUT', `/workspace-members/${elsewhere.id}`, { workspaceId: ws, body: { role: 'viewer' } }), 404, 'ResourceNotFound')
  })

  it('the last owner cannot be demoted or removed (400); with a second owner both work', async () => {
    const ws = await newWorkspace()
    expectError(await admin('PUT', `/workspace-members/${ownerId}`, { workspaceId: ws, body: { role: 'administrator' } }), 400, 'InvalidPayload')
    expectError(await admin('DELETE', `/workspace-members/${ownerId}`, { workspaceId: ws }), 400, 'InvalidPayload')
    expect((await admin('GET', '/workspace-members/me', { workspaceId: ws })).body.role).toBe('owner')

    const second = await addMember(ws, 'owner')
    // The second owner is now alone able to keep the workspace: demote the first.
    const demoted = await admin('PUT', `/workspace-members/${ownerId}`, { token: second.token, workspaceId: ws, body: { role: 'administrator' } })
    expect(demoted.status, demoted.text).toBe(200)
    expect(demoted.body.role).toBe('administrator')
    // Now the second owner is the last one: it cannot demote itself or leave.
    expectError(await admin('PUT', `/workspace-members/${second.id}`, { token: second.token, workspaceId: ws, body: { role: 'viewer' } }), 400, 'InvalidPayload')
    expectError(await admin('DELETE', `/workspace-members/${second.id}`, { token: second.token, workspaceId: ws }), 400, 'InvalidPayload')
    // Promote the first back, then the second may leave.
    expect((await admin('PUT', `/workspace-members/${ownerId}`, { token: second.token, workspaceId: ws, body: { role: 'owner' } })).status).toBe(200)
    const left = await admin('DELETE', `/workspace-members/${second.id}`, { token: second.token, workspaceId: ws })
    expect(left.status, left.text).toBe(200)
    expect(left.body).toEqual({})
  })

  it.each(['billing', 'viewer', 'developer', 'manager', 'administrator'])('a %s can leave the workspace, and then loses access (403)', async (role) => {
    const ws = await newWorkspace()
    const m = await addMember(ws, role)
    expect((await admin('GET', '/workspace-members/me', { token: m.token, workspaceId: ws })).status).toBe(200)
    const res = await admin('DELETE', `/workspace-members/${m.id}`, { token: m.token, workspaceId: ws })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({})
    expectError(await admin('GET', '/workspace-members/me', { token: m.token, workspaceId: ws }), 403, 'Forbidden')
    expectError(await admin('GET', `/workspaces/${ws}`, { token: m.token, workspaceId: null }), 404, 'ResourceNotFound')
    const list = await admin('GET', '/workspace-members', { workspaceId: ws })
    expect(list.body.members.map((x: { id: string }) => x.id)).not.toContain(m.id)
    // The account and its token still exist.
    expect((await admin('GET', '/account/me', { token: m.token, workspaceId: null })).status).toBe(200)
  })

  it('an owner removes a member; removing an unknown member is 404', async () => {
    const ws = await newWorkspace()
    const m = await addMember(ws, 'manager')
    const res = await admin('DELETE', `/workspace-members/${m.id}`, { workspaceId: ws })
    expect(res.status, res.text).toBe(200)
    expectError(await admin('GET', '/bots', { token: m.token, workspaceId: ws }), 403, 'Forbidden')
    expectError(await admin('DELETE', `/workspace-members/${m.id}`, { workspaceId: ws }), 404, 'ResourceNotFound')
    expectError(await admin('DELETE', '/workspace-members/no-such-member', { workspaceId: ws }), 404, 'ResourceNotFound')
    // Re-adding works and reuses the account.
    const back = await admin('POST', '/workspace-members', { workspaceId: ws, body: { email: m.email, role: 'viewer' } })
    expect(back.status).toBe(201)
    expect(back.body.id).toBe(m.id)
  })

  it('role assignment rules: an administrator may grant up to administrator but not owner, nor touch an owner', async () => {
    const ws = await newWorkspace()
    const adminMember = await addMember(ws, 'administrator')
    const t = adminMember.token
    for (const role of ['billing', 'viewer', 'developer', 'manager', 'administrator']) {
      const res = await admin('POST', '/workspace-members', { token: t, workspaceId: ws, body: { email: email(`by-admin-${role}`), role } })
      expect(res.status, `${role}: ${res.text}`).toBe(201)
      expect(res.body.role).toBe(role)
    }
    expectError(await admin('POST', '/workspace-members', { token: t, workspaceId: ws, body: { email: email('by-admin-owner'), role: 'owner' } }), 403, 'Forbidden')
    const v = await addMember(ws, 'viewer')
    expectError(await admin('PUT', `/workspace-members/${v.id}`, { token: t, workspaceId: ws, body: { role: 'owner' } }), 403, 'Forbidden')
    expect((await admin('PUT', `/workspace-members/${v.id}`, { token: t, workspaceId: ws, body: { role: 'manager' } })).status).toBe(200)
    expectError(await admin('PUT', `/workspace-members/${ownerId}`, { token: t, workspaceId: ws, body: { role: 'viewer' } }), 403, 'Forbidden')
    expectError(await admin('DELETE', `/workspace-members/${ownerId}`, { token: t, workspaceId: ws }), 403, 'Forbidden')
    expect((await admin('DELETE', `/workspace-members/${v.id}`, { token: t, workspaceId: ws })).status).toBe(200)
    // The owner is untouched.
    expect((await admin('GET', '/workspace-members/me', { workspaceId: ws })).body.role).toBe('owner')
  })

  it('only members with members.write may add, change or remove others (manager, developer, viewer, billing: 403)', async () => {
    const ws = await newWorkspace()
    const target = await addMember(ws, 'viewer')
    for (const role of ['billing', 'viewer', 'developer', 'manager']) {
      const m = await addMember(ws, role)
      expectError(await admin('POST', '/workspace-members', { token: m.token, workspaceId: ws, body: { email: email('nope'), role: 'billing' } }), 403, 'Forbidden')
      expectError(await admin('PUT', `/workspace-members/${target.id}`, { token: m.token, workspaceId: ws, body: { role: 'billing' } }), 403, 'Forbidden')
      expectError(await admin('DELETE', `/workspace-members/${target.id}`, { token: m.token, workspaceId: ws }), 403, 'Forbidden')
      // ...and cannot promote themselves either.
      expectError(await admin('PUT', `/workspace-members/${m.id}`, { token: m.token, workspaceId: ws, body: { role: 'owner' } }), 403, 'Forbidden')
      // Read access is granted to all of them.
      expect((await admin('GET', '/workspace-members', { token: m.token, workspaceId: ws })).status).toBe(200)
    }
    expect((await admin('GET', '/workspace-members/me', { token: target.token, workspaceId: ws })).body.role).toBe('viewer')
  })
})
