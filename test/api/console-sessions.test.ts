/**
 * Console sessions end with what made them (issue #24): the personal access token a session was signed in with
 * (directly, or through a sign-in link minted with it), the member's removal from a workspace or a change of their
 * role; and an account lists its sessions and revokes one or all (listConsoleSessions, revokeConsoleSession,
 * revokeConsoleSessions). Both engines, through app.inject.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { consoleClient, consoleSignIn } from '../helpers/console.js'

/** The secret of a sign-in link (`…/console/#link=<secret>`). */
const linkSecret = (url: string) => decodeURIComponent(new URL(url).hash.replace(/^#link=/, ''))

describe('Console sessions end with their token, membership and role', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  const admin = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    h.app.inject({ method, url: `/v1/admin${url}`, headers: { authorization: `Bearer ${token}`, 'x-workspace-id': h.credentials.workspaceId }, ...(payload && { payload }) })

  /** A new member of the workspace with `role` and a PAT. */
  const member = async (role: string) => {
    const res = await admin(h.credentials.token, 'POST', '/workspace-members', { email: `m-${randomUUID()}@example.com`, role })
    expect(res.statusCode, res.body).toBeLessThan(300)
    const body = res.json()
    return { accountId: body.id as string, token: body.pat.value as string }
  }
  /** A second PAT of the account that owns `token`. */
  const newPat = async (token: string) => {
    const res = await admin(token, 'POST', '/account/pats', { note: 'console' })
    expect(res.statusCode, res.body).toBeLessThan(300)
    return res.json().pat as { id: string; value: string }
  }
  const signIn = async (body: { token?: string; link?: string }) => {
    const signed = await consoleSignIn(h, body)
    expect(signed.res.status, signed.res.text).toBe(200)
    return consoleClient(h, signed.cookie)
  }
  /** What a console session may do: read, mint a sign-in link, mint a PAT. All 401 once it ended. */
  const statuses = async (api: ReturnType<typeof consoleClient>) => [
    (await api('GET', '/v1/admin/account/me')).status,
    (await api('POST', '/v1/admin/account/console-links', { body: {} })).status,
    (await api('POST', '/v1/admin/account/pats', { body: { note: 'from the console' } })).status,
  ]

  it('a session made from a PAT ends when that PAT is deleted (reads, sign-in links and new PATs all 401)', async () => {
    const pat = await newPat(h.credentials.token)
    const api = await signIn({ token: pat.value })
    const other = await signIn({ token: h.credentials.token })
    expect(await statuses(api)).toEqual([200, 201, 201])
    expect((await admin(h.credentials.token, 'DELETE', `/account/pats/${pat.id}`, {})).statusCode).toBe(200)
    expect(await statuses(api)).toEqual([401, 401, 401])
    expect((await api('GET', '/console/session')).status).toBe(401)
    // A session made from another token of the same account lives on.
    expect((await other('GET', '/v1/admin/account/me')).status).toBe(200)
  })

  it('a session made from a sign-in link ends with the PAT the link was minted with', async () => {
    const pat = await newPat(h.credentials.token)
    const link = await admin(pat.value, 'POST', '/account/console-links', {})
    expect(link.statusCode, link.body).toBe(201)
    const secret = linkSecret(link.json().url)
    const api = await signIn({ link: secret })
    expect((await api('GET', '/v1/admin/account/me')).status).toBe(200)
    // And a link minted by that session is tied to the same PAT.
    const minted = await api('POST', '/v1/admin/account/console-links', { body: {} })
    const second = linkSecret(minted.body.url)
    expect((await admin(h.credentials.token, 'DELETE', `/account/pats/${pat.id}`, {})).statusCode).toBe(200)
    expect((await api('GET', '/v1/admin/account/me')).status).toBe(401)
    expect((await consoleSignIn(h, { link: second })).res.status).toBe(401)
  })

  it('removing a member or changing their role ends their console sessions', async () => {
    const changed = await member('developer')
    const removed = await member('developer')
    const changedApi = await signIn({ token: changed.token })
    const removedApi = await signIn({ token: removed.token })
    const bystander = await signIn({ token: (await member('developer')).token })
    expect((await changedApi('GET', '/v1/admin/bots')).status).toBe(200)
    const changedId = changed.accountId
    const removedId = removed.accountId
    expect((await admin(h.credentials.token, 'PUT', `/workspace-members/${changedId}`, { role: 'viewer' })).statusCode).toBe(200)
    expect((await admin(h.credentials.token, 'DELETE', `/workspace-members/${removedId}`, {})).statusCode).toBe(200)
    expect((await changedApi('GET', '/v1/admin/account/me')).status).toBe(401)
    expect((await removedApi('GET', '/v1/admin/account/me')).status).toBe(401)
    expect((await bystander('GET', '/v1/admin/account/me')).status).toBe(200)
    // The PAT itself still works with the new role (it is the session, not the token, that ends).
    expect((await admin(changed.token, 'GET', '/bots')).statusCode).toBe(200)
    expect((await signIn({ token: changed.token }))).toBeTypeOf('function')
  })

  it('lists the account\'s sessions, revokes one, and signs out everywhere; another account\'s are 404', async () => {
    const someone = await member('developer')
    const mine = await signIn({ token: someone.token })
    const second = await signIn({ token: someone.token })
    const stranger = await signIn({ token: h.credentials.token })
    const listed = await mine('GET', '/v1/admin/account/console-sessions')
    expect(listed.status, listed.text).toBe(200)
    const sessions = listed.body.sessions as { id: string; current: boolean; createdAt: string; expiresAt: string; personalAccessTokenId: string | null }[]
    expect(sessions).toHaveLength(2)
    expect(sessions.filter((s) => s.current)).toHaveLength(1)
    for (const s of sessions) expect(s.personalAccessTokenId).toBeTypeOf('string')
    expect(listed.text).not.toMatch(/parley_console|token_?hash/i)
    const other = sessions.find((s) => !s.current)!
    // Not the stranger's to see or revoke.
    expect((await stranger('GET', '/v1/admin/account/console-sessions')).body.sessions.map((s: { id: string }) => s.id)).not.toContain(other.id)
    const refused = await stranger('DELETE', `/v1/admin/account/console-sessions/${other.id}`)
    expect(refused.status).toBe(404)
    expect(refused.body).toMatchObject({ code: 404, type: 'ResourceNotFound' })
    expect((await second('GET', '/v1/admin/account/me')).status).toBe(200)
    // Revoke one.
    expect((await mine('DELETE', `/v1/admin/account/console-sessions/${other.id}`)).status).toBe(200)
    expect((await second('GET', '/v1/admin/account/me')).status).toBe(401)
    expect((await mine('GET', '/v1/admin/account/me')).status).toBe(200)
    // Sign out everywhere (with a PAT: every console session of the account; the PAT itself stays valid).
    const third = await signIn({ token: someone.token })
    const all = await admin(someone.token, 'DELETE', '/account/console-sessions', {})
    expect(all.statusCode, all.body).toBe(200)
    expect(all.json()).toEqual({ revoked: 2 })
    expect((await mine('GET', '/v1/admin/account/me')).status).toBe(401)
    expect((await third('GET', '/v1/admin/account/me')).status).toBe(401)
    expect((await stranger('GET', '/v1/admin/account/me')).status).toBe(200)
    expect((await admin(someone.token, 'GET', '/account/me')).statusCode).toBe(200)
  })
})
