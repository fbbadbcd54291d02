import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UserView } from '../../src/domain/chat-views.js'
import { hashSecret } from '../../src/lib/crypto.js'
import { authMatrix, contextSecrets, expectApiError, expectNoLeak, fid, startSecurityContext, type SecurityContext } from '../helpers/chat-client.js'

describe('security: users', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  authMatrix('users', () => ctx)

  describe('unauthenticated user routes', () => {
    it('answers 404 for createUser and the hello probe on an unknown webhook, creating nothing', async () => {
      const unknown = ctx.chat.withWebhook('no-such-webhook')
      expectApiError(await unknown.request('GET', '/hello/'), 404, 'ResourceNotFound')
      const id = fid('nowhere')
      expectApiError(await unknown.request('POST', '/users', { body: { id } }), 404, 'ResourceNotFound')
      // The id was not taken anywhere.
      expect((await ctx.chat.request('POST', '/users', { body: { id } })).status).toBe(201)
    })

    it('answers the hello probe on a known webhook without a key', async () => {
      const res = await ctx.chat.request('GET', '/hello/')
      expect(res.status).toBe(200)
      expectNoLeak(res, contextSecrets(ctx), '')
    })

    it("does not reveal another integration's user on a 409: the same id is free on each integration", async () => {
      const id = fid('shared')
      await ctx.other.chat.createUser({ id, name: 'Tenant B private name' })
      const res = await ctx.chat.request<{ user: UserView }>('POST', '/users', { body: { id } })
      expect(res.status).toBe(201)
      expect(res.text).not.toContain('Tenant B private name')
    })
  })

  describe('keys', () => {
    it('are long random secrets, stored only as hashes', async () => {
      const { user, key } = await ctx.chat.createUser({ id: fid('hashed') })
      expect(key.length).toBeGreaterThanOrEqual(32)
      expect(key).not.toContain(user.id)
      const rows = await ctx.h.store.db.selectFrom('user_keys').selectAll().where('user_id', '=', user.id).execute()
      expect(rows).toHaveLength(1)
      const stored = JSON.stringify(rows)
      expect(stored).not.toContain(key)
      expect(rows[0]!.key_hash).toBe(hashSecret(key))
    })

    it('are not JWTs that anyone with the id could forge, and do not embed the encryption key', async () => {
      const { key } = await ctx.chat.createUser()
      expect(key).not.toContain(ctx.chat.encryptionKey)
      for (const part of key.split('.')) {
        const decoded = Buffer.from(part, 'base64url').toString('utf8')
        expect(decoded).not.toContain(ctx.chat.encryptionKey)
      }
    })

    it('one user key never acts for another user', async () => {
      const a = await ctx.chat.createUser({ name: 'A private' })
      const b = await ctx.chat.createUser({ name: 'B private' })
      const meB = await ctx.chat.request<{ user: UserView }>('GET', '/users/me', { key: b.key })
      expect(meB.body.user.id).toBe(b.user.id)
      expect(meB.text).not.toContain('A private')
      await ctx.chat.request('PUT', '/users/me', { key: b.key, body: { name: 'B renamed' } })
      const meA = await ctx.chat.request<{ user: UserView }>('GET', '/users/me', { key: a.key })
      expect(meA.body.user.name).toBe('A private')
    })

    it('a refused key gets the same answer whether it never existed or was deleted (no key oracle)', async () => {
      const deleted = await ctx.chat.request('GET', '/users/me', { key: ctx.deletedKey })
      const never = await ctx.chat.request('GET', '/users/me', { key: `uk_${'A'.repeat(43)}` })
      const a = expectApiError(deleted, 401, 'Unauthorized')
      const b = expectApiError(never, 401, 'Unauthorized')
      expect(a.message).toBe(b.message)
    })

    it('a repeated x-user-key header is refused', async () => {
      const res = await ctx.chat.app.inject({
        method: 'GET',
        url: ctx.chat.url('/users/me'),
        headers: { 'x-user-key': [ctx.fixture.ownerKey, ctx.outsider.key] },
      })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toMatchObject({ code: 401, type: 'Unauthorized' })
      expect(res.body).not.toContain(ctx.fixture.ownerId)
    })

    it('a key of another integration is refused even on get-or-create, and creates nothing', async () => {
      const res = await ctx.chat.request('POST', '/users/get-or-create', { key: ctx.other.key, body: {} })
      expectApiError(res, 401, 'Unauthorized')
      const created = await ctx.chat.request('POST', '/users', { body: { id: ctx.other.userId } })
      expect(created.status).toBe(201)
    })

    it('a JWT signed by another integration for a new id creates nothing here', async () => {
      const id = fid('smuggled')
      expectApiError(await ctx.chat.request('POST', '/users/get-or-create', { key: ctx.other.chat.jwt(id), body: {} }), 401, 'Unauthorized')
      expect((await ctx.chat.request('POST', '/users', { body: { id } })).status).toBe(201)
    })
  })

  describe('self-service only', () => {
    it('cannot rename, re-id or delete another user through the body', async () => {
      const victim = await ctx.chat.createUser({ name: 'Victim' })
      const attacker = await ctx.chat.createUser()
      expectApiError(await ctx.chat.request('PUT', '/users/me', { key: attacker.key, body: { id: victim.user.id, name: 'pwned' } }), 400, 'InvalidPayload')
      expectApiError(await ctx.chat.request('DELETE', '/users/me', { key: attacker.key, body: { id: victim.user.id } }), 400, 'InvalidPayload')
      const me = await ctx.chat.request<{ user: UserView }>('GET', '/users/me', { key: victim.key })
      expect(me.body.user.name).toBe('Victim')
    })

    it('deleting a user leaves every other user and key working', async () => {
      const a = await ctx.chat.createUser()
      const b = await ctx.chat.createUser()
      await ctx.chat.request('DELETE', '/users/me', { key: a.key, body: {} })
      expect((await ctx.chat.request('GET', '/users/me', { key: b.key })).status).toBe(200)
      expect((await ctx.chat.request('GET', '/users/me', { key: ctx.fixture.ownerKey })).status).toBe(200)
    })
  })
})
