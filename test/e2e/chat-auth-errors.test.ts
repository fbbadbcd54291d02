/**
 * Authentication, integration isolation and the error contract, through the official client
 * (which maps the error body to typed errors) and raw fetch (for status codes and bodies).
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { connectJwt, connectServerKey, expectErrorBody, raw, uid } from './helpers.js'

describe('e2e: chat auth and errors (official client)', () => {
  let h: Harness
  let apiUrl: string
  let other: { webhookId: string; encryptionKey: string; url: string }

  beforeAll(async () => {
    h = await startParley({ listen: true })
    apiUrl = h.credentials.chat.url
    other = await h.createChatIntegration()
  })
  afterAll(async () => h?.close())

  it('the two integrations are distinct', () => {
    expect(other.webhookId).not.toBe(h.credentials.chat.webhookId)
    expect(other.encryptionKey).not.toBe(h.credentials.chat.encryptionKey)
  })

  it('accepts a JWT minted by the client from the encryption key, on every authenticated operation', async () => {
    const alice = await chat.Client.connect({ apiUrl, encryptionKey: h.credentials.chat.encryptionKey, userId: uid('alice') })
    // The key is a compact HS256 JWT { id, iat }.
    const parts = alice.user.key.split('.')
    expect(parts).toHaveLength(3)
    const [header, payload] = parts.slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>)
    expect(header).toMatchObject({ alg: 'HS256' })
    expect(payload).toMatchObject({ id: alice.user.id, iat: expect.any(Number) })
    const { conversation } = await alice.createConversation({})
    await expect(alice.listConversations({})).resolves.toBeTruthy()
    await expect(alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'ok' } })).resolves.toBeTruthy()
  })

  it('missing or invalid x-user-key is 401 Unauthorized (UnauthorizedError in the client)', async () => {
    for (const [method, path] of [
      ['GET', '/users/me'], ['PUT', '/users/me'], ['DELETE', '/users/me'], ['POST', '/users/get-or-create'],
      ['POST', '/conversations'], ['GET', '/conversations'], ['GET', '/conversations/x'], ['POST', '/messages'], ['GET', '/messages/x'],
      ['POST', '/events'], ['GET', '/events/x'], ['GET', '/conversations/x/participants'], ['GET', '/conversations/x/listen'],
    ] as const) {
      const res = await raw(apiUrl, method, path, method === 'GET' ? {} : { body: {} })
      expectErrorBody(res, 401, 'Unauthorized')
    }
    const client = new chat.Client({ apiUrl })
    await expect(client.getUser({ 'x-user-key': 'not-a-key' })).rejects.toThrow(chat.UnauthorizedError)
    await expect(client.getUser({ 'x-user-key': 'uk_forged-server-key' })).rejects.toThrow(chat.UnauthorizedError)
    await expect(chat.Client.connect({ apiUrl, userKey: 'eyJhbGciOiJIUzI1NiJ9.eyJpZCI6Im1hbGxvcnkifQ.AAAA' })).rejects.toThrow(chat.UnauthorizedError)
  })

  it('a JWT signed with a wrong key is 401, even for an existing user id', async () => {
    const victim = await connectJwt(h)
    await expect(
      chat.Client.connect({ apiUrl, encryptionKey: 'not-the-integration-key', userId: victim.user.id }),
    ).rejects.toThrow(chat.UnauthorizedError)
  })

  it('a JWT for integration A is refused on integration B (401), and A\'s encryption key cannot log into B', async () => {
    const alice = await connectJwt(h)
    const onB = new chat.Client({ apiUrl: other.url })
    await expect(onB.getUser({ 'x-user-key': alice.user.key })).rejects.toThrow(chat.UnauthorizedError)
    await expect(onB.getOrCreateUser({ 'x-user-key': alice.user.key })).rejects.toThrow(chat.UnauthorizedError)
    await expect(chat.Client.connect({ apiUrl: other.url, userKey: alice.user.key })).rejects.toThrow(chat.UnauthorizedError)
    await expect(
      chat.Client.connect({ apiUrl: other.url, encryptionKey: h.credentials.chat.encryptionKey, userId: alice.user.id }),
    ).rejects.toThrow(chat.UnauthorizedError)
    expectErrorBody(await raw(other.url, 'GET', '/users/me', { key: alice.user.key }), 401, 'Unauthorized')
  })

  it('a server-issued key of integration A is refused on integration B (401)', async () => {
    const alice = await connectServerKey(h)
    const onB = new chat.Client({ apiUrl: other.url })
    await expect(onB.getUser({ 'x-user-key': alice.user.key })).rejects.toThrow(chat.UnauthorizedError)
    await expect(onB.createConversation({ 'x-user-key': alice.user.key })).rejects.toThrow(chat.UnauthorizedError)
    expectErrorBody(await raw(other.url, 'POST', '/users/get-or-create', { key: alice.user.key, body: {} }), 401, 'Unauthorized')
  })

  it('the same user id on two integrations designates two separate users; nothing crosses over', async () => {
    const userId = uid('twin')
    const onA = await connectJwt(h, userId)
    const onB = await chat.Client.connect({ apiUrl: other.url, encryptionKey: other.encryptionKey, userId })
    await onA.updateUser({ name: 'on A' })
    expect((await onB.getUser({})).user.name).toBeUndefined()
    const { conversation } = await onA.createConversation({ id: uid('conv') })
    await expect(onB.getConversation({ id: conversation.id })).rejects.toThrow(chat.ResourceNotFoundError)
    expect((await onB.listConversations({})).conversations).toEqual([])
    // The conversation id is free on B.
    await expect(onB.createConversation({ id: conversation.id })).resolves.toMatchObject({ conversation: { id: conversation.id } })
  })

  it('non-participants get 403 ForbiddenError on every conversation-scoped operation', async () => {
    const alice = await connectJwt(h)
    const mallory = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const cid = conversation.id
    const { message } = await alice.createMessage({ conversationId: cid, payload: { type: 'text', text: 'private' } })
    const { event } = await alice.createEvent({ conversationId: cid, payload: { private: true } })

    const attempts: [string, () => Promise<unknown>][] = [
      ['getConversation', () => mallory.getConversation({ id: cid })],
      ['getOrCreateConversation', () => mallory.getOrCreateConversation({ id: cid })],
      ['deleteConversation', () => mallory.deleteConversation({ id: cid })],
      ['listMessages', () => mallory.listMessages({ conversationId: cid })],
      ['createMessage', () => mallory.createMessage({ conversationId: cid, payload: { type: 'text', text: 'intrude' } })],
      ['getMessage', () => mallory.getMessage({ id: message.id })],
      ['deleteMessage', () => mallory.deleteMessage({ id: message.id })],
      ['createEvent', () => mallory.createEvent({ conversationId: cid, payload: {} })],
      ['getEvent', () => mallory.getEvent({ id: event.id })],
      ['listParticipants', () => mallory.listParticipants({ conversationId: cid })],
      ['getParticipant', () => mallory.getParticipant({ conversationId: cid, userId: alice.user.id })],
      ['addParticipant', () => mallory.addParticipant({ conversationId: cid, userId: mallory.user.id })],
      ['removeParticipant', () => mallory.removeParticipant({ conversationId: cid, userId: alice.user.id })],
    ]
    for (const [name, attempt] of attempts) {
      await expect(attempt(), name).rejects.toThrow(chat.ForbiddenError)
    }
    expectErrorBody(await raw(apiUrl, 'GET', `/conversations/${cid}`, { key: mallory.user.key }), 403, 'Forbidden')
    // Nothing changed.
    expect((await alice.listMessages({ conversationId: cid })).messages).toEqual([message])
    expect((await alice.listParticipants({ conversationId: cid })).participants.map((p) => p.id)).toEqual([alice.user.id])
  })

  it('unknown conversation, message, event are 404 ResourceNotFoundError', async () => {
    const alice = await connectJwt(h)
    await expect(alice.getConversation({ id: 'no-such-conversation' })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.deleteConversation({ id: 'no-such-conversation' })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.listMessages({ conversationId: 'no-such-conversation' })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.listParticipants({ conversationId: 'no-such-conversation' })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.createEvent({ conversationId: 'no-such-conversation', payload: {} })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.getMessage({ id: 'no-such-message' })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.deleteMessage({ id: 'no-such-message' })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.getEvent({ id: 'no-such-event' })).rejects.toThrow(chat.ResourceNotFoundError)
    expectErrorBody(await raw(apiUrl, 'GET', '/conversations/no-such-conversation', { key: alice.user.key }), 404, 'ResourceNotFound')
    expectErrorBody(await raw(apiUrl, 'GET', '/messages/no-such-message', { key: alice.user.key }), 404, 'ResourceNotFound')
    expectErrorBody(await raw(apiUrl, 'GET', '/events/no-such-event', { key: alice.user.key }), 404, 'ResourceNotFound')
    // A message or event of another integration is unknown here, whatever its id.
    const onB = await chat.Client.connect({ apiUrl: other.url, encryptionKey: other.encryptionKey, userId: uid('b') })
    const { conversation } = await onB.createConversation({})
    const { message } = await onB.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'on B' } })
    const { event } = await onB.createEvent({ conversationId: conversation.id, payload: {} })
    await expect(alice.getMessage({ id: message.id })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.getEvent({ id: event.id })).rejects.toThrow(chat.ResourceNotFoundError)
  })

  it('409 AlreadyExistsError for a taken user id and a taken conversation id', async () => {
    const client = new chat.Client({ apiUrl })
    const userId = uid('taken')
    await client.createUser({ id: userId })
    await expect(client.createUser({ id: userId })).rejects.toThrow(chat.AlreadyExistsError)
    const alice = await connectJwt(h)
    const conversationId = uid('taken-conv')
    await alice.createConversation({ id: conversationId })
    await expect(alice.createConversation({ id: conversationId })).rejects.toThrow(chat.AlreadyExistsError)
    expectErrorBody(await raw(apiUrl, 'POST', '/conversations', { key: alice.user.key, body: { id: conversationId } }), 409, 'AlreadyExists')
    expectErrorBody(await raw(apiUrl, 'POST', '/users', { body: { id: userId } }), 409, 'AlreadyExists')
  })

  it('400 InvalidPayloadError for invalid foreign ids (invalid+x, 120 chars) and for removing the owner', async () => {
    const client = new chat.Client({ apiUrl })
    const alice = await connectJwt(h)
    const invalidIds = [`invalid+${uid('x')}`, 'y'.repeat(120)]
    for (const id of invalidIds) {
      await expect(client.createUser({ id })).rejects.toThrow(chat.InvalidPayloadError)
      await expect(connectJwt(h, id)).rejects.toThrow(chat.InvalidPayloadError)
      await expect(alice.createConversation({ id })).rejects.toThrow(chat.InvalidPayloadError)
      await expect(alice.getOrCreateConversation({ id })).rejects.toThrow(chat.InvalidPayloadError)
    }
    const { conversation } = await alice.createConversation({})
    await expect(alice.removeParticipant({ conversationId: conversation.id, userId: alice.user.id })).rejects.toThrow(chat.InvalidPayloadError)
  })

  it('413 PayloadTooLarge for a createMessage body over 1 MB (raw body and client error)', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const text = 'x'.repeat(1024 * 1024 + 10)
    const res = await raw(apiUrl, 'POST', '/messages', { key: alice.user.key, body: { conversationId: conversation.id, payload: { type: 'text', text } } })
    expect(res.status).toBe(413)
    expect(Object.keys(res.body).sort()).toEqual(expect.arrayContaining(['code', 'id', 'message', 'type']))
    expect(res.body).toMatchObject({ code: 413, type: 'PayloadTooLarge' })
    expect(typeof res.body.id).toBe('string')
    expect(typeof res.body.message).toBe('string')
    await expect(alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })).rejects.toThrow(chat.PayloadTooLargeError)
    // Nothing was stored; a body just under the limit still works.
    expect((await alice.listMessages({ conversationId: conversation.id })).messages).toEqual([])
    await expect(alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'x'.repeat(1000 * 1000) } })).resolves.toBeTruthy()
  })

  it('an unknown webhook id makes the client throw ChatClientError on its first call (hello probe fails)', async () => {
    const badUrl = `${h.baseUrl}/${h.credentials.chat.webhookId}1234`
    const client = new chat.Client({ apiUrl: badUrl })
    const attempt = client.createUser({ id: 'invalid' })
    await expect(attempt).rejects.toThrow(chat.ChatClientError)
    await expect(attempt).rejects.not.toThrow(chat.ResourceNotFoundError)
    await expect(chat.Client.connect({ apiUrl: badUrl })).rejects.toThrow(chat.ChatClientError)
    await expect(chat.Client.connect({ apiUrl: `${h.baseUrl}/nope`, encryptionKey: h.credentials.chat.encryptionKey, userId: 'u' })).rejects.toThrow(
      chat.ChatClientError,
    )
    // And the server answers every route of an unknown webhook with 404, not 401.
    expectErrorBody(await raw(badUrl, 'POST', '/users', { body: {} }), 404, 'ResourceNotFound')
    expectErrorBody(await raw(badUrl, 'GET', '/users/me', { key: 'whatever' }), 404, 'ResourceNotFound')
  })

  it('every one of the 21 operations answers with its documented status (201 for creates, 200 otherwise)', async () => {
    const u = (await raw(apiUrl, 'POST', '/users', { body: { name: 'status' } }))
    expect(u.status).toBe(201)
    const key = u.body.key as string
    const peer = await raw(apiUrl, 'POST', '/users', { body: {} })
    expect(peer.status).toBe(201)
    const peerId = peer.body.user.id as string
    expect((await raw(apiUrl, 'POST', '/users/get-or-create', { key, body: {} })).status).toBe(201)
    expect((await raw(apiUrl, 'GET', '/users/me', { key })).status).toBe(200)
    expect((await raw(apiUrl, 'PUT', '/users/me', { key, body: { name: 'renamed' } })).status).toBe(200)
    const conv = await raw(apiUrl, 'POST', '/conversations', { key, body: {} })
    expect(conv.status).toBe(201)
    const cid = conv.body.conversation.id as string
    expect((await raw(apiUrl, 'POST', '/conversations/get-or-create', { key, body: { id: cid } })).status).toBe(201)
    expect((await raw(apiUrl, 'GET', `/conversations/${cid}`, { key })).status).toBe(200)
    expect((await raw(apiUrl, 'GET', '/conversations', { key })).status).toBe(200)
    expect((await raw(apiUrl, 'POST', `/conversations/${cid}/participants`, { key, body: { userId: peerId } })).status).toBe(200)
    expect((await raw(apiUrl, 'GET', `/conversations/${cid}/participants/${peerId}`, { key })).status).toBe(200)
    expect((await raw(apiUrl, 'GET', `/conversations/${cid}/participants`, { key })).status).toBe(200)
    const msg = await raw(apiUrl, 'POST', '/messages', { key, body: { conversationId: cid, payload: { type: 'text', text: 'hi' } } })
    expect(msg.status).toBe(201)
    expect((await raw(apiUrl, 'GET', `/messages/${msg.body.message.id}`, { key })).status).toBe(200)
    expect((await raw(apiUrl, 'GET', `/conversations/${cid}/messages`, { key })).status).toBe(200)
    const ev = await raw(apiUrl, 'POST', '/events', { key, body: { conversationId: cid, payload: { a: 1 } } })
    expect(ev.status).toBe(201)
    expect((await raw(apiUrl, 'GET', `/events/${ev.body.event.id}`, { key })).status).toBe(200)
    expect((await raw(apiUrl, 'DELETE', `/messages/${msg.body.message.id}`, { key, body: {} })).status).toBe(200)
    expect((await raw(apiUrl, 'DELETE', `/conversations/${cid}/participants/${peerId}`, { key, body: {} })).status).toBe(200)
    expect((await raw(apiUrl, 'DELETE', `/conversations/${cid}`, { key, body: {} })).status).toBe(200)
    expect((await raw(apiUrl, 'DELETE', '/users/me', { key, body: {} })).status).toBe(200)
    // (listenConversation's 200 is covered by the stream suite.)
  })
})
