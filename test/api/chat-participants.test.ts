import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConversationView, UserView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { b64, ChatClient, expectApiError, fid } from '../helpers/chat-client.js'


describe('Chat API: participants', () => {
  let h: Harness
  let chat: ChatClient

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
  })
  afterAll(async () => h.close())

  async function conversationWithOwner() {
    const owner = await chat.createUser({ name: 'Owner' })
    const conversation = await chat.createConversation(owner.key, fid('pc'))
    return { owner, conversationId: conversation.id }
  }

  describe('addParticipant (POST /conversations/{id}/participants)', () => {
    it('adds a user: 200 {participant} in the user shape; the user can then read and post', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser({ name: 'Member', pictureUrl: 'https://img.example/m.png' })
      const res = await chat.request<{ participant: UserView }>('POST', `/conversations/${conversationId}/participants`, { key: owner.key, body: { userId: member.user.id } })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['participant'])
      expect(res.body.participant).toEqual(member.user)

      expect((await chat.request('GET', `/conversations/${conversationId}`, { key: member.key })).status).toBe(200)
      const posted = await chat.text(member.key, conversationId, 'hello from the member')
      expect(posted.userId).toBe(member.user.id)
      const list = await chat.listAll<ConversationView>(member.key, '/conversations', 'conversations')
      expect(list.items.map((c) => c.id)).toContain(conversationId)
    })

    it('adding twice is harmless: 200 and no duplicate participant', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      const again = await chat.request('POST', `/conversations/${conversationId}/participants`, { key: owner.key, body: { userId: member.user.id } })
      expect(again.status).toBe(200)
      const ownerAgain = await chat.request('POST', `/conversations/${conversationId}/participants`, { key: owner.key, body: { userId: owner.user.id } })
      expect(ownerAgain.status).toBe(200)
      const { items } = await chat.listAll<UserView>(owner.key, `/conversations/${conversationId}/participants`, 'participants')
      expect(items.map((u) => u.id)).toEqual([owner.user.id, member.user.id])
    })

    it('any participant may add another user', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser()
      const third = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      const res = await chat.request('POST', `/conversations/${conversationId}/participants`, { key: member.key, body: { userId: third.user.id } })
      expect(res.status).toBe(200)
      expect((await chat.request('GET', `/conversations/${conversationId}`, { key: third.key })).status).toBe(200)
    })

    it('answers 404 for an unknown user and for a user that exists only on another integration', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      expectApiError(await chat.request('POST', `/conversations/${conversationId}/participants`, { key: owner.key, body: { userId: fid('ghost') } }), 404, 'ResourceNotFound')
      const other = await h.createChatIntegration()
      const stranger = await chat.withWebhook(other.webhookId, other.encryptionKey).createUser({ id: fid('elsewhere') })
      expectApiError(await chat.request('POST', `/conversations/${conversationId}/participants`, { key: owner.key, body: { userId: stranger.user.id } }), 404, 'ResourceNotFound')
    })

    it('answers 404 for an unknown conversation', async () => {
      const { owner } = await conversationWithOwner()
      const member = await chat.createUser()
      expectApiError(await chat.request('POST', `/conversations/${fid('nope')}/participants`, { key: owner.key, body: { userId: member.user.id } }), 404, 'ResourceNotFound')
    })

    it.each([
      ['no userId', {}],
      ['an empty userId', { userId: '' }],
      ['a numeric userId', { userId: 12 }],
      ['an unknown key', { userId: 'x', role: 'admin' }],
    ])('answers 400 InvalidPayload for %s', async (_name, body) => {
      const { owner, conversationId } = await conversationWithOwner()
      expectApiError(await chat.request('POST', `/conversations/${conversationId}/participants`, { key: owner.key, body }), 400, 'InvalidPayload')
    })
  })

  describe('getParticipant (GET /conversations/{id}/participants/{userId})', () => {
    it('returns a participant, the owner included', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser({ name: 'M', profile: 'p' })
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      for (const [key, target] of [[owner.key, member.user], [member.key, owner.user], [member.key, member.user]] as const) {
        const res = await chat.request<{ participant: UserView }>('GET', `/conversations/${conversationId}/participants/${target.id}`, { key })
        expect(res.status).toBe(200)
        expect(Object.keys(res.body)).toEqual(['participant'])
        expect(res.body.participant).toEqual(target)
      }
    })

    it('answers 404 for a user who is not a participant, and for an unknown user', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const outsider = await chat.createUser({ name: 'Outsider private name' })
      const res = await chat.request('GET', `/conversations/${conversationId}/participants/${outsider.user.id}`, { key: owner.key })
      expectApiError(res, 404, 'ResourceNotFound')
      expect(res.text).not.toContain('Outsider private name')
      expectApiError(await chat.request('GET', `/conversations/${conversationId}/participants/${fid('ghost')}`, { key: owner.key }), 404, 'ResourceNotFound')
    })
  })

  describe('removeParticipant (DELETE /conversations/{id}/participants/{userId})', () => {
    it('removes a participant: 200 {}, then 404 on get and 403 for the removed user', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      const message = await chat.text(owner.key, conversationId, 'before removal')

      const res = await chat.request('DELETE', `/conversations/${conversationId}/participants/${member.user.id}`, { key: owner.key, body: {} })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({})

      expectApiError(await chat.request('GET', `/conversations/${conversationId}/participants/${member.user.id}`, { key: owner.key }), 404, 'ResourceNotFound')
      expectApiError(await chat.request('GET', `/conversations/${conversationId}`, { key: member.key }), 403, 'Forbidden')
      expectApiError(await chat.request('GET', `/messages/${message.id}`, { key: member.key }), 403, 'Forbidden')
      expectApiError(
        await chat.request('POST', '/messages', { key: member.key, body: { conversationId, payload: { type: 'text', text: 'still here?' } } }),
        403,
        'Forbidden',
      )
      const list = await chat.listAll<ConversationView>(member.key, '/conversations', 'conversations')
      expect(list.items.map((c) => c.id)).not.toContain(conversationId)
      expectApiError(await chat.request('DELETE', `/conversations/${conversationId}/participants/${member.user.id}`, { key: owner.key, body: {} }), 404, 'ResourceNotFound')
    })

    it('a participant may leave by removing itself', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      const res = await chat.request('DELETE', `/conversations/${conversationId}/participants/${member.user.id}`, { key: member.key, body: {} })
      expect(res.status).toBe(200)
      expectApiError(await chat.request('GET', `/conversations/${conversationId}`, { key: member.key }), 403, 'Forbidden')
    })

    it('a removed participant added again regains access', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      await chat.request('DELETE', `/conversations/${conversationId}/participants/${member.user.id}`, { key: owner.key, body: {} })
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      expect((await chat.request('GET', `/conversations/${conversationId}`, { key: member.key })).status).toBe(200)
    })

    it('the owner cannot be removed: 400 InvalidPayload, by itself or by another participant', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const member = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      for (const key of [owner.key, member.key]) {
        expectApiError(await chat.request('DELETE', `/conversations/${conversationId}/participants/${owner.user.id}`, { key, body: {} }), 400, 'InvalidPayload')
      }
      const res = await chat.request<{ participant: UserView }>('GET', `/conversations/${conversationId}/participants/${owner.user.id}`, { key: member.key })
      expect(res.status).toBe(200)
    })

    it('answers 404 for a user who is not a participant and 400 for a non-empty body', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const outsider = await chat.createUser()
      expectApiError(await chat.request('DELETE', `/conversations/${conversationId}/participants/${outsider.user.id}`, { key: owner.key, body: {} }), 404, 'ResourceNotFound')
      const member = await chat.createUser()
      await chat.addParticipant(owner.key, conversationId, member.user.id)
      expectApiError(await chat.request('DELETE', `/conversations/${conversationId}/participants/${member.user.id}`, { key: owner.key, body: { hard: true } }), 400, 'InvalidPayload')
      expect((await chat.request('GET', `/conversations/${conversationId}/participants/${member.user.id}`, { key: owner.key })).status).toBe(200)
    })
  })

  describe('listParticipants (GET /conversations/{id}/participants)', () => {
    it('pages over more than 20 participants without skipping or repeating, in join order', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const expected = [owner.user.id]
      for (let i = 0; i < 34; i++) {
        const user = await chat.createUser({ id: `p-${String(i).padStart(2, '0')}-${fid('u')}` })
        await chat.addParticipant(owner.key, conversationId, user.user.id)
        expected.push(user.user.id)
      }
      const { items, pages } = await chat.listAll<UserView>(owner.key, `/conversations/${conversationId}/participants`, 'participants')
      expect(pages).toBe(2)
      expect(items.map((u) => u.id)).toEqual(expected)
    })

    it('is consistent with removals between pages: nobody repeated', async () => {
      const { owner, conversationId } = await conversationWithOwner()
      const ids: string[] = []
      for (let i = 0; i < 25; i++) {
        const user = await chat.createUser()
        await chat.addParticipant(owner.key, conversationId, user.user.id)
        ids.push(user.user.id)
      }
      const first = await chat.request<{ participants: UserView[]; meta: { nextToken?: string } }>('GET', `/conversations/${conversationId}/participants`, { key: owner.key })
      expect(first.body.participants).toHaveLength(20)
      await chat.request('DELETE', `/conversations/${conversationId}/participants/${ids[2]!}`, { key: owner.key, body: {} })
      const second = await chat.request<{ participants: UserView[]; meta: { nextToken?: string } }>('GET', `/conversations/${conversationId}/participants`, { key: owner.key, query: { nextToken: first.body.meta.nextToken! } })
      const all = [...first.body.participants, ...second.body.participants].map((u) => u.id)
      expect(new Set(all).size).toBe(all.length)
      expect(all).toHaveLength(26)
      expect(second.body.meta).toEqual({})
    })

    it.each([
      ['garbage', '%%%'],
      ['the wrong shape', b64(['a'])],
      ['wrong types', b64(['x', 'y'])],
      ['too long', 'B'.repeat(700)],
    ])('answers 400 InvalidQuery for a nextToken with %s', async (_name, nextToken) => {
      const { owner, conversationId } = await conversationWithOwner()
      expectApiError(await chat.request('GET', `/conversations/${conversationId}/participants`, { key: owner.key, query: { nextToken } }), 400, 'InvalidQuery')
    })

    it('answers 404 for an unknown conversation', async () => {
      const { owner } = await conversationWithOwner()
      expectApiError(await chat.request('GET', `/conversations/${fid('nope')}/participants`, { key: owner.key }), 404, 'ResourceNotFound')
    })
  })
})
