/**
 * Chat API conversations, driven by the official @botpress/chat client over real HTTP:
 * createConversation, getOrCreateConversation, getConversation, deleteConversation,
 * listConversations (paging through meta.nextToken and client.list.conversations).
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { CHAT_PAGE_SIZE } from '../../src/domain/chat-service.js'
import { connectJwt, expectErrorBody, expectIsoZ, raw, uid } from './helpers.js'

describe('e2e: chat conversations (official client)', () => {
  let h: Harness
  let apiUrl: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    apiUrl = h.credentials.chat.url
  })
  afterAll(async () => h?.close())

  it('createConversation returns 201 { conversation } with a generated id and ISO Z dates; getConversation returns the same object', async () => {
    const alice = await connectJwt(h)
    const res = await raw(apiUrl, 'POST', '/conversations', { key: alice.user.key, body: {} })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body)).toEqual(['conversation'])
    const conversation = res.body.conversation
    expect(Object.keys(conversation).sort()).toEqual(['createdAt', 'id', 'updatedAt'])
    expectIsoZ(conversation.createdAt)
    expectIsoZ(conversation.updatedAt)

    const got = await raw(apiUrl, 'GET', `/conversations/${conversation.id}`, { key: alice.user.key })
    expect(got.status).toBe(200)
    expect(got.body).toEqual({ conversation })

    const viaClient = await alice.createConversation({})
    expect((await alice.getConversation({ id: viaClient.conversation.id })).conversation).toEqual(viaClient.conversation)
  })

  it('createConversation with a foreign id keeps it; the id cannot be taken twice, even by another user (409 AlreadyExists)', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const id = uid('conv')
    const { conversation } = await alice.createConversation({ id })
    expect(conversation.id).toBe(id)
    await expect(alice.createConversation({ id })).rejects.toThrow(chat.AlreadyExistsError)
    await expect(bob.createConversation({ id })).rejects.toThrow(chat.AlreadyExistsError)
    expectErrorBody(await raw(apiUrl, 'POST', '/conversations', { key: alice.user.key, body: { id } }), 409, 'AlreadyExists')
  })

  it('getOrCreateConversation returns 201, creates once and then returns the same conversation', async () => {
    const alice = await connectJwt(h)
    const id = uid('goc')
    const res = await raw(apiUrl, 'POST', '/conversations/get-or-create', { key: alice.user.key, body: { id } })
    expect(res.status).toBe(201)
    expect(res.body.conversation.id).toBe(id)
    const again = await alice.getOrCreateConversation({ id })
    const third = await alice.getOrCreateConversation({ id })
    expect(again.conversation).toEqual(res.body.conversation)
    expect(third.conversation).toEqual(res.body.conversation)
    expect((await alice.getConversation({ id })).conversation).toEqual(res.body.conversation)
    // The creator is its participant (owner).
    const { participants } = await alice.listParticipants({ conversationId: id })
    expect(participants.map((p) => p.id)).toEqual([alice.user.id])
  })

  it('getOrCreateConversation on someone else\'s conversation is 403 Forbidden, not a takeover', async () => {
    const alice = await connectJwt(h)
    const mallory = await connectJwt(h)
    const { conversation } = await alice.createConversation({ id: uid('private') })
    await expect(mallory.getOrCreateConversation({ id: conversation.id })).rejects.toThrow(chat.ForbiddenError)
    await expect(mallory.getConversation({ id: conversation.id })).rejects.toThrow(chat.ForbiddenError)
  })

  it('refuses invalid foreign ids with 400 InvalidPayload (createConversation and getOrCreateConversation)', async () => {
    const alice = await connectJwt(h)
    for (const id of [`invalid+${uid('c')}`, 'c'.repeat(120)]) {
      await expect(alice.createConversation({ id })).rejects.toThrow(chat.InvalidPayloadError)
      await expect(alice.getOrCreateConversation({ id })).rejects.toThrow(chat.InvalidPayloadError)
      expectErrorBody(await raw(apiUrl, 'POST', '/conversations', { key: alice.user.key, body: { id } }), 400, 'InvalidPayload')
    }
  })

  it('listConversations pages through more than one page with meta.nextToken, newest first, without gaps or duplicates', async () => {
    const alice = await connectJwt(h)
    const other = await connectJwt(h)
    await other.createConversation({}) // not alice's: must not be listed

    const total = 2 * CHAT_PAGE_SIZE + 5
    const created: chat.Conversation[] = []
    for (let i = 0; i < total; i++) created.push((await alice.createConversation({})).conversation)

    const first = await raw(apiUrl, 'GET', '/conversations', { key: alice.user.key })
    expect(first.status).toBe(200)
    expect(first.body.conversations).toHaveLength(CHAT_PAGE_SIZE)
    expect(typeof first.body.meta.nextToken).toBe('string')

    const pages: chat.Conversation[][] = []
    let nextToken: string | undefined
    do {
      const page = await alice.listConversations({ ...(nextToken !== undefined && { nextToken }) })
      pages.push(page.conversations)
      nextToken = page.meta.nextToken
    } while (nextToken)
    expect(pages.map((p) => p.length)).toEqual([CHAT_PAGE_SIZE, CHAT_PAGE_SIZE, 5])

    const listed = pages.flat()
    expect(new Set(listed.map((c) => c.id)).size).toBe(total)
    // Same objects as createConversation returned, newest first.
    const byId = new Map(created.map((c) => [c.id, c]))
    for (const c of listed) expect(c).toEqual(byId.get(c.id))
    expect(listed.map((c) => c.id)).toEqual([...created].reverse().map((c) => c.id))
    for (let i = 1; i < listed.length; i++) {
      expect(Date.parse(listed[i - 1]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(listed[i]!.createdAt))
    }
  })

  it('client.list.conversations(...) collects every page through the client\'s own nextToken loop', async () => {
    const alice = await connectJwt(h)
    const total = CHAT_PAGE_SIZE + 3
    const ids: string[] = []
    for (let i = 0; i < total; i++) ids.push((await alice.createConversation({})).conversation.id)
    const all = await alice.list.conversations({}).collect()
    expect(all).toHaveLength(total)
    expect(new Set(all.map((c) => c.id))).toEqual(new Set(ids))
    const limited = await alice.list.conversations({}).collect({ limit: 4 })
    expect(limited.map((c) => c.id)).toEqual(all.slice(0, 4).map((c) => c.id))
  })

  it('listConversations includes conversations the user was added to, and a forged nextToken is 400', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    expect((await bob.listConversations({})).conversations).toEqual([])
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const { conversations, meta } = await bob.listConversations({})
    expect(conversations.map((c) => c.id)).toEqual([conversation.id])
    expect(meta.nextToken).toBeFalsy()
    const forged = await raw(apiUrl, 'GET', '/conversations?nextToken=not-a-token', { key: bob.user.key })
    expect(forged.status).toBe(400)
    expect(forged.body).toMatchObject({ code: 400 })
  })

  it('deleteConversation (DELETE, body {}) returns 200 {}, deletes its messages, and the id is 404 afterwards', async () => {
    const alice = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'bye' } })
    const { event } = await alice.createEvent({ conversationId: conversation.id, payload: { k: 1 } })

    const res = await raw(apiUrl, 'DELETE', `/conversations/${conversation.id}`, { key: alice.user.key, body: {} })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})

    await expect(alice.getConversation({ id: conversation.id })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.getMessage({ id: message.id })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.getEvent({ id: event.id })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.listMessages({ conversationId: conversation.id })).rejects.toThrow(chat.ResourceNotFoundError)
    expect((await alice.listConversations({})).conversations.map((c) => c.id)).not.toContain(conversation.id)

    // Through the client too.
    const second = await alice.createConversation({})
    await expect(alice.deleteConversation({ id: second.conversation.id })).resolves.toEqual({})
    await expect(alice.deleteConversation({ id: second.conversation.id })).rejects.toThrow(chat.ResourceNotFoundError)
  })

  it('only participants may delete a conversation (403 for others)', async () => {
    const alice = await connectJwt(h)
    const mallory = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await expect(mallory.deleteConversation({ id: conversation.id })).rejects.toThrow(chat.ForbiddenError)
    await expect(alice.getConversation({ id: conversation.id })).resolves.toBeTruthy()
  })
})
