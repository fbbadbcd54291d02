/**
 * Chat API users, driven by the official @botpress/chat client over real HTTP:
 * hello probe, createUser, getOrCreateUser, getUser, updateUser, deleteUser.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { connectJwt, expectErrorBody, expectIsoZ, raw, uid } from './helpers.js'

describe('e2e: chat users (official client)', () => {
  let h: Harness
  let apiUrl: string
  let client: chat.Client

  beforeAll(async () => {
    h = await startParley({ listen: true })
    apiUrl = h.credentials.chat.url
    client = new chat.Client({ apiUrl })
  })
  afterAll(async () => h?.close())

  it('answers the hello probe the client sends (GET {apiUrl}/hello/, no key) and 404s an unknown webhook', async () => {
    const ok = await raw(apiUrl, 'GET', '/hello/')
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual({})
    const unknown = await raw(`${h.baseUrl}/no-such-webhook`, 'GET', '/hello/')
    expectErrorBody(unknown, 404, 'ResourceNotFound')
    // The probe is what Client.connect() runs first; it must pass.
    await expect(chat.Client.connect({ apiUrl })).resolves.toBeInstanceOf(chat.AuthenticatedClient)
  })

  it('createUser returns 201 with { user, key } and the user carries its profile fields and ISO Z dates', async () => {
    const res = await raw(apiUrl, 'POST', '/users', { body: { name: 'Ada', pictureUrl: 'https://example.com/ada.png', profile: 'math' } })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body).sort()).toEqual(['key', 'user'])
    expect(typeof res.body.key).toBe('string')
    expect(res.body.user).toMatchObject({ name: 'Ada', pictureUrl: 'https://example.com/ada.png', profile: 'math' })
    expectIsoZ(res.body.user.createdAt)
    expectIsoZ(res.body.user.updatedAt)

    const { user, key } = await client.createUser({ name: 'Grace', profile: 'compilers' })
    expect(user).toMatchObject({ name: 'Grace', profile: 'compilers' })
    expect(user.id.length).toBeGreaterThan(0)
    expectIsoZ(user.createdAt)
    // The server-issued key authenticates every other operation and designates that same user.
    const me = await client.getUser({ 'x-user-key': key })
    expect(me.user).toEqual(user)
  })

  it('createUser with a foreign id keeps that id; the id cannot be taken twice (409 AlreadyExists)', async () => {
    const id = uid('fid-user')
    const { user } = await client.createUser({ id })
    expect(user.id).toBe(id)
    await expect(client.createUser({ id })).rejects.toThrow(chat.AlreadyExistsError)
    const again = await raw(apiUrl, 'POST', '/users', { body: { id } })
    expectErrorBody(again, 409, 'AlreadyExists')
  })

  it('getOrCreateUser returns 201 and is idempotent for server-issued keys', async () => {
    const { user, key } = await client.createUser({})
    const res = await raw(apiUrl, 'POST', '/users/get-or-create', { key, body: {} })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ user })
    const first = await client.getOrCreateUser({ 'x-user-key': key })
    const second = await client.getOrCreateUser({ 'x-user-key': key })
    expect(first.user).toEqual(user)
    expect(second.user).toEqual(user)
  })

  it('Client.connect with an encryption key mints a JWT that creates the user once, then finds it', async () => {
    const userId = uid('jwt-user')
    const first = await connectJwt(h, userId)
    expect(first.user.id).toBe(userId)
    expectIsoZ(first.user.createdAt)
    const second = await connectJwt(h, userId)
    const { key: _k1, ...u1 } = first.user
    const { key: _k2, ...u2 } = second.user
    expect(u2).toEqual(u1)
    expect((await second.getUser({})).user).toEqual(u1)
    // createUser is refused for an id the JWT path already created.
    await expect(client.createUser({ id: userId })).rejects.toThrow(chat.AlreadyExistsError)
  })

  it('getOrCreateUser creates a new JWT user with the given profile fields', async () => {
    const userId = uid('jwt-named')
    const authed = await connectJwt(h, userId)
    await authed.deleteUser({})
    const { user } = await client.getOrCreateUser({ 'x-user-key': authed.user.key, name: 'Named', profile: 'p' })
    expect(user).toMatchObject({ id: userId, name: 'Named', profile: 'p' })
    expect((await client.getUser({ 'x-user-key': authed.user.key })).user).toEqual(user)
  })

  it('the client also reaches the server through { webhookId, baseApiUrl }', async () => {
    const viaWebhook = new chat.Client({ webhookId: h.credentials.chat.webhookId, baseApiUrl: h.baseUrl })
    const { user, key } = await viaWebhook.createUser({})
    expect((await client.getUser({ 'x-user-key': key })).user).toEqual(user)
  })

  it('a JWT naming a user created with createUser({ id }) designates that user (e2e "get or create user with a fid")', async () => {
    const userId = uid('fid-then-jwt')
    const { user } = await client.createUser({ id: userId, name: 'Linus' })
    const authed = await connectJwt(h, userId)
    expect((await authed.getUser({})).user).toEqual(user)
    expect((await client.getOrCreateUser({ 'x-user-key': authed.user.key })).user).toEqual(user)
  })

  it('Client.connect() without credentials creates a fresh user (createUser path), with or without a foreign id', async () => {
    const anon = await chat.Client.connect({ apiUrl })
    expect(anon.user.id.length).toBeGreaterThan(0)
    expect((await anon.getUser({})).user.id).toBe(anon.user.id)
    const userId = uid('connect-fid')
    const named = await chat.Client.connect({ apiUrl, userId })
    expect(named.user.id).toBe(userId)
    // connect({ userKey }) resumes the same user through getOrCreateUser.
    const resumed = await chat.Client.connect({ apiUrl, userKey: named.user.key })
    expect(resumed.user).toEqual(named.user)
  })

  it('getUser (GET /users/me) returns 200 and the key owner', async () => {
    const authed = await connectJwt(h)
    const res = await raw(apiUrl, 'GET', '/users/me', { key: authed.user.key })
    expect(res.status).toBe(200)
    expect(res.body.user.id).toBe(authed.user.id)
    const { user } = await authed.getUser({})
    expect(user).toEqual(res.body.user)
  })

  it('updateUser (PUT /users/me) returns 200, changes the given fields only, keeps createdAt and moves updatedAt forward', async () => {
    const { user, key } = await client.createUser({ name: 'Before', profile: 'kept' })
    const res = await raw(apiUrl, 'PUT', '/users/me', { key, body: { name: 'After' } })
    expect(res.status).toBe(200)
    expect(res.body.user).toMatchObject({ id: user.id, name: 'After', profile: 'kept', createdAt: user.createdAt })
    expectIsoZ(res.body.user.updatedAt)
    expect(Date.parse(res.body.user.updatedAt)).toBeGreaterThanOrEqual(Date.parse(user.updatedAt))

    const { user: updated } = await client.updateUser({ 'x-user-key': key, pictureUrl: 'https://example.com/p.png' })
    expect(updated).toMatchObject({ id: user.id, name: 'After', profile: 'kept', pictureUrl: 'https://example.com/p.png', createdAt: user.createdAt })
    expect((await client.getUser({ 'x-user-key': key })).user).toEqual(updated)
  })

  it('deleteUser (DELETE /users/me, body {}) returns 200 {}; the key stops working and the id becomes free again', async () => {
    const id = uid('doomed')
    const { key } = await client.createUser({ id })
    const res = await raw(apiUrl, 'DELETE', '/users/me', { key, body: {} })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    await expect(client.getUser({ 'x-user-key': key })).rejects.toThrow(chat.UnauthorizedError)
    // The id can be reused by a new user.
    await expect(client.createUser({ id })).resolves.toMatchObject({ user: { id } })

    // Same through the client, for a JWT user: deleteUser resolves to {}.
    const authed = await connectJwt(h)
    await expect(authed.deleteUser({})).resolves.toEqual({})
    await expect(authed.getUser({})).rejects.toThrow(chat.UnauthorizedError)
  })

  it('refuses invalid foreign ids with 400 InvalidPayload (createUser and a JWT naming one)', async () => {
    const invalid = [`invalid+${uid('x')}`, 'x'.repeat(120)]
    for (const id of invalid) {
      await expect(client.createUser({ id })).rejects.toThrow(chat.InvalidPayloadError)
      expectErrorBody(await raw(apiUrl, 'POST', '/users', { body: { id } }), 400, 'InvalidPayload')
      await expect(connectJwt(h, id)).rejects.toThrow(chat.InvalidPayloadError)
    }
  })
})
