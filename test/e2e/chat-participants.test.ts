/**
 * Chat API participants, driven by the official @botpress/chat client over real HTTP:
 * addParticipant, getParticipant, removeParticipant, listParticipants (paging).
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { CHAT_PAGE_SIZE } from '../../src/domain/chat-service.js'
import { connectJwt, expectErrorBody, raw, uid } from './helpers.js'

type User = Awaited<ReturnType<chat.AuthenticatedClient['getUser']>>['user']

describe('e2e: chat participants (official client)', () => {
  let h: Harness
  let apiUrl: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    apiUrl = h.credentials.chat.url
  })
  afterAll(async () => h?.close())

  it('addParticipant returns 200 { participant } equal to the user; getParticipant and listParticipants return the same object', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    await bob.updateUser({ name: 'Bob', pictureUrl: 'https://example.com/bob.png' })
    const { user: bobUser } = await bob.getUser({})
    const { user: aliceUser } = await alice.getUser({})
    const { conversation } = await alice.createConversation({})

    const res = await raw(apiUrl, 'POST', `/conversations/${conversation.id}/participants`, { key: alice.user.key, body: { userId: bob.user.id } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ participant: bobUser })

    const got = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/participants/${bob.user.id}`, { key: alice.user.key })
    expect(got.status).toBe(200)
    expect(got.body).toEqual({ participant: bobUser })
    expect((await bob.getParticipant({ conversationId: conversation.id, userId: alice.user.id })).participant).toEqual(aliceUser)

    const list = await raw(apiUrl, 'GET', `/conversations/${conversation.id}/participants`, { key: bob.user.key })
    expect(list.status).toBe(200)
    expect(list.body.participants).toEqual([aliceUser, bobUser])
    expect(list.body.meta.nextToken).toBeFalsy()
    // The added user now sees the conversation.
    // (updatedAt may move: adding a participant updates the conversation.)
    const seen = (await bob.getConversation({ id: conversation.id })).conversation
    expect(seen).toMatchObject({ id: conversation.id, createdAt: conversation.createdAt })
    expect(Date.parse(seen.updatedAt)).toBeGreaterThanOrEqual(Date.parse(conversation.updatedAt))
  })

  it('addParticipant through the client; adding an unknown user is 404 ResourceNotFound', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const { participant } = await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    expect(participant.id).toBe(bob.user.id)
    await expect(alice.addParticipant({ conversationId: conversation.id, userId: 'nobody-here' })).rejects.toThrow(chat.ResourceNotFoundError)
  })

  it('participants can post only while they take part (e2e: 403 before add, ok after, 403 after remove)', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    const post = () => bob.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hello world' } })
    await expect(post()).rejects.toThrow(chat.ForbiddenError)
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    await expect(post()).resolves.toBeTruthy()

    const res = await raw(apiUrl, 'DELETE', `/conversations/${conversation.id}/participants/${bob.user.id}`, { key: alice.user.key, body: {} })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    await expect(post()).rejects.toThrow(chat.ForbiddenError)
    await expect(bob.getConversation({ id: conversation.id })).rejects.toThrow(chat.ForbiddenError)
    await expect(alice.getParticipant({ conversationId: conversation.id, userId: bob.user.id })).rejects.toThrow(chat.ResourceNotFoundError)
    expect((await alice.listParticipants({ conversationId: conversation.id })).participants.map((p) => p.id)).toEqual([alice.user.id])
  })

  it('removeParticipant through the client resolves to {}; removing a non-participant is 404; removing the owner is 400 InvalidPayload', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    await expect(alice.removeParticipant({ conversationId: conversation.id, userId: bob.user.id })).resolves.toEqual({})
    await expect(alice.removeParticipant({ conversationId: conversation.id, userId: bob.user.id })).rejects.toThrow(chat.ResourceNotFoundError)
    await expect(alice.removeParticipant({ conversationId: conversation.id, userId: alice.user.id })).rejects.toThrow(chat.InvalidPayloadError)
    const raw400 = await raw(apiUrl, 'DELETE', `/conversations/${conversation.id}/participants/${alice.user.id}`, { key: alice.user.key, body: {} })
    expectErrorBody(raw400, 400, 'InvalidPayload')
    // A participant who is not the owner cannot remove the owner either.
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    await expect(bob.removeParticipant({ conversationId: conversation.id, userId: alice.user.id })).rejects.toThrow(chat.InvalidPayloadError)
  })

  it('non-participants cannot list, get, add or remove participants (403 Forbidden)', async () => {
    const alice = await connectJwt(h)
    const bob = await connectJwt(h)
    const mallory = await connectJwt(h)
    const { conversation } = await alice.createConversation({})
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    await expect(bob.listParticipants({ conversationId: conversation.id })).resolves.toBeTruthy()
    await expect(mallory.listParticipants({ conversationId: conversation.id })).rejects.toThrow(chat.ForbiddenError)
    await expect(mallory.getParticipant({ conversationId: conversation.id, userId: alice.user.id })).rejects.toThrow(chat.ForbiddenError)
    await expect(mallory.addParticipant({ conversationId: conversation.id, userId: mallory.user.id })).rejects.toThrow(chat.ForbiddenError)
    await expect(mallory.removeParticipant({ conversationId: conversation.id, userId: bob.user.id })).rejects.toThrow(chat.ForbiddenError)
  })

  it('listParticipants pages past one page (meta.nextToken) in join order; client.list.participants collects them all', async () => {
    // Ids sort like the join order, so the order is fixed even when two joins share a millisecond.
    const run = uid('r')
    const alice = await connectJwt(h, `p000-${run}`)
    const { user: owner } = await alice.getUser({})
    const { conversation } = await alice.createConversation({})
    const others: User[] = []
    for (let i = 1; i <= CHAT_PAGE_SIZE + 5; i++) {
      const u = await connectJwt(h, `p${String(i).padStart(3, '0')}-${run}`)
      others.push((await alice.addParticipant({ conversationId: conversation.id, userId: u.user.id })).participant)
    }
    const expected = [owner, ...others]

    const pages: User[][] = []
    let nextToken: string | undefined
    do {
      const page = await alice.listParticipants({ conversationId: conversation.id, ...(nextToken !== undefined && { nextToken }) })
      pages.push(page.participants)
      nextToken = page.meta.nextToken
    } while (nextToken)
    expect(pages.map((p) => p.length)).toEqual([CHAT_PAGE_SIZE, expected.length - CHAT_PAGE_SIZE])
    expect(pages.flat()).toEqual(expected)

    const collected = await alice.list.participants({ conversationId: conversation.id }).collect()
    expect(collected).toEqual(expected)
  })
})
