/**
 * Contract of ConversationArchiveStore (src/store/conversation-archive-store.ts), run against each engine: search by
 * message words (case-insensitive, LIKE wildcards taken literally), user id and tag value, by date and failed turns,
 * latest activity first with keyset pages; exports in (conversation, seq) order across pages, never another
 * integration's rows.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import { newMessage, seed, type Fixture } from './store.contract.js'

export type ArchiveStoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>

export function describeConversationArchiveContract(name: string, factory: ArchiveStoreFactory): void {
  describe(`ConversationArchiveStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let f: Fixture
    const t = 1_750_000_000_000
    const conv: string[] = []

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      f = await seed(store, t)
      // Three conversations of three users, at increasing times; one in the other integration.
      for (let i = 0; i < 3; i++) {
        const userId = `user-${i}-${randomUUID()}`
        await store.createUser({ integrationId: f.a.id, id: userId, now: t + i * 1000 })
        const c = await store.createConversation(f.a.id, `conv-${i}-${randomUUID()}`, userId, t + i * 1000)
        conv.push(c.id)
        const texts = i === 0 ? ['Hello Kangaroo', '100% sure', 'under_score'] : [`plain ${i}`, `more ${i}`]
        for (const [j, text] of texts.entries()) await store.appendMessage(newMessage(f.a.id, c.id, userId, t + i * 1000 + j + 1, { type: 'text', text }))
      }
      await store.botChat.updateConversation(f.a.id, conv[1]!, { tags: { topic: 'billing' } }, t + 5000)
      const other = `other-${randomUUID()}`
      await store.createUser({ integrationId: f.b.id, id: other, now: t })
      const oc = await store.createConversation(f.b.id, `conv-b-${randomUUID()}`, other, t)
      await store.appendMessage(newMessage(f.b.id, oc.id, other, t + 1, { type: 'text', text: 'Hello Kangaroo' }))
      await store.appendBotLogs([{ id: randomUUID(), botId: f.bot.id, at: t + 9000, level: 'error', message: 'boom', conversationId: conv[2]! }])
      // conv[1] was handed to a person (and back); the other integration's conversation has the same id as none of them
      const opened = await store.handoffs.open({ id: randomUUID(), botId: f.bot.id, integrationId: f.a.id, conversationId: conv[1]!, userId: 'someone', reason: null, requestedAt: t + 6000 })
      await store.handoffs.end(opened.handoff.id, t + 7000)
    })
    afterAll(async () => cleanup?.())

    const base = () => ({ integrationIds: [f.a.id], botId: f.bot.id })
    const ids = async (over: object, limit = 50) => (await store.conversationArchive.searchConversations({ ...base(), ...over }, { limit })).items.map((c) => c.id)

    it('lists latest activity first, with message counts, tags, and keyset pages', async () => {
      expect(await ids({})).toEqual([conv[2], conv[1], conv[0]])
      const first = await store.conversationArchive.searchConversations(base(), { limit: 2 })
      expect(first.items.map((c) => c.id)).toEqual([conv[2], conv[1]])
      expect(first.items[1]).toMatchObject({ messageCount: 2, tags: { topic: 'billing' } })
      const second = await store.conversationArchive.searchConversations(base(), { limit: 2, after: first.next })
      expect(second.items.map((c) => c.id)).toEqual([conv[0]])
      expect(second.next).toBeUndefined()
    })

    it('searches message words case-insensitively, LIKE wildcards literally, user ids and tag values', async () => {
      expect(await ids({ q: 'kangaroo' })).toEqual([conv[0]])
      expect(await ids({ q: '100%' })).toEqual([conv[0]])
      expect(await ids({ q: '%' })).toEqual([conv[0]])
      expect(await ids({ q: 'under_s' })).toEqual([conv[0]])
      expect(await ids({ q: 'kangar_o' })).toEqual([])
      expect(await ids({ q: 'billing' })).toEqual([conv[1]])
      const owner = (await store.conversationArchive.searchConversations({ ...base(), conversationId: conv[2] }, { limit: 1 })).items[0]!.ownerId!
      expect(await ids({ q: owner })).toEqual([conv[2]])
    })

    it('filters by dates and failed turns', async () => {
      expect(await ids({ from: t + 1002 })).toEqual([conv[2], conv[1]])
      expect(await ids({ to: t + 500 })).toEqual([conv[0]])
      expect(await ids({ failed: true })).toEqual([conv[2]])
    })

    it('filters conversations handed to a person (open or ended handoffs), combined with the other filters', async () => {
      expect(await ids({ handoff: true })).toEqual([conv[1]])
      expect(await ids({ handoff: true, q: 'billing' })).toEqual([conv[1]])
      expect(await ids({ handoff: true, failed: true })).toEqual([])
      expect(await ids({ handoff: false })).toEqual([conv[2], conv[1], conv[0]])
    })

    it('exports messages by (conversation, seq) across pages, only of the matching conversations', async () => {
      const seen: string[] = []
      let after: string | undefined
      let pages = 0
      do {
        const p = await store.conversationArchive.exportMessages(base(), { limit: 2, after })
        seen.push(...p.items.map((m) => `${m.conversationId}#${m.seq}`))
        after = p.next
        pages++
      } while (after)
      expect(seen).toHaveLength(7)
      expect(pages).toBe(4)
      expect([...seen].sort((a, b) => {
        const [ca, sa] = a.split('#'); const [cb, sb] = b.split('#')
        return ca! < cb! ? -1 : ca! > cb! ? 1 : Number(sa) - Number(sb)
      })).toEqual(seen)
      const one = await store.conversationArchive.exportMessages({ ...base(), q: 'kangaroo' }, { limit: 50 })
      expect(one.items.map((m) => (m.payload as { text: string }).text)).toEqual(['Hello Kangaroo', '100% sure', 'under_score'])
    })

    it('spans several integrations: a conversation id in two of them is two conversations, listed and exported once each', async () => {
      const both = { integrationIds: [f.a.id, f.b.id], botId: f.bot.id }
      const twin = `twin-${randomUUID()}`
      await store.createUser({ integrationId: f.b.id, id: twin, now: t })
      // The same id as conv[0] of the other integration, at the same instant, with one message.
      await store.createConversation(f.b.id, conv[0]!, twin, t)
      await store.appendMessage(newMessage(f.b.id, conv[0]!, twin, t + 1, { type: 'text', text: 'the twin' }))
      const listed: string[] = []
      let after: string | undefined
      do {
        const p = await store.conversationArchive.searchConversations(both, { limit: 1, after })
        listed.push(...p.items.map((c) => `${c.integrationId}/${c.id}`))
        after = p.next
      } while (after)
      expect(listed.filter((k) => k.endsWith(`/${conv[0]}`)).sort()).toEqual([`${f.a.id}/${conv[0]}`, `${f.b.id}/${conv[0]}`].sort())
      expect(listed).toHaveLength(new Set(listed).size)
      expect(listed).toHaveLength(5) // three of f.a, the other one of f.b and the twin
      const exported: string[] = []
      do {
        const p = await store.conversationArchive.exportMessages({ ...both, conversationId: conv[0] }, { limit: 1, after })
        exported.push(...p.items.map((m) => (m.payload as { text: string }).text))
        after = p.next
      } while (after)
      expect(exported.sort()).toEqual(['100% sure', 'Hello Kangaroo', 'the twin', 'under_score'])
    })
  })
}
