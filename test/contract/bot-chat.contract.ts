/**
 * Contract of BotChatStore (src/store/bot-chat-store.ts), the Runtime API's view of the chat data,
 * run against each engine: owner-less conversations beside the Chat API's, tags stored, patched
 * (null removes), filtered (AND) and cascaded away with their rows, bot-wide filtered lists with
 * keyset paging, message updates, and distinct tag values.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UniqueViolation, type Store } from '../../src/store/store.js'
import { newMessage, seed } from './store.contract.js'

export type BotChatStoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>

const uid = (p: string) => `${p}-${randomUUID().slice(0, 8)}`

export function describeBotChatContract(name: string, factory: BotChatStoreFactory): void {
  describe(`BotChatStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let integrationId: string
    let otherIntegrationId: string
    let botId: string
    let now = 2_000_000

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      const fx = await seed(store)
      integrationId = fx.a.id
      otherIntegrationId = fx.b.id
      botId = fx.bot.id
    })
    afterAll(async () => cleanup?.())

    it('users: created with tags, properties and attributes; unique ids; patched (null removes); found by tags; bot users never found', async () => {
      const id = uid('u')
      const user = await store.botChat.createUser({ integrationId, id, name: 'Ada', now: ++now, tags: { plan: 'pro', k: 'v' }, attributes: { lang: 'en' } })
      expect(user).toMatchObject({ id, name: 'Ada', tags: { plan: 'pro', k: 'v' }, attributes: { lang: 'en' }, properties: null, isBot: false })
      await expect(store.botChat.createUser({ integrationId, id, now, tags: {} })).rejects.toBeInstanceOf(UniqueViolation)
      expect(await store.botChat.getUser([otherIntegrationId, integrationId], id)).toEqual(user)
      expect(await store.botChat.getUser([otherIntegrationId], id)).toBeUndefined()

      const updated = await store.botChat.updateUser(integrationId, id, { name: null, tags: { plan: null, tier: 'gold' }, attributes: { lang: null } }, ++now)
      expect(updated).toMatchObject({ name: null, tags: { k: 'v', tier: 'gold' }, attributes: null, updatedAt: now })
      expect(await store.botChat.updateUser(integrationId, 'missing', { name: 'x' }, now)).toBeUndefined()
      expect((await store.botChat.findUser(integrationId, { k: 'v', tier: 'gold' }))?.id).toBe(id)
      expect(await store.botChat.findUser(integrationId, { k: 'v', tier: 'silver' })).toBeUndefined()
      // The bot's own user (created with its integration) is never matched or listed.
      expect((await store.botChat.getUser([integrationId], botId))?.isBot).toBe(true)
      const all = await store.botChat.listUsers({ integrationIds: [integrationId], rangeField: 'createdAt', sortField: 'createdAt', sortDirection: 'asc' }, { limit: 100 })
      expect(all.items.some((u) => u.id === botId)).toBe(false)
      // Deleting the user deletes its tags (a new user with the same id starts without them).
      await store.deleteUser(integrationId, id)
      expect((await store.botChat.createUser({ integrationId, id, now: ++now, tags: {} })).tags).toEqual({})
    })

    it('conversations: owner-less (no participant), the channel and tags; the Chat API\'s keep their owner', async () => {
      const conversation = await store.botChat.createConversation({ integrationId, id: uid('c'), channel: 'sms', tags: { t: '1' }, properties: { p: 'q' }, now: ++now })
      expect(conversation).toMatchObject({ ownerId: null, channel: 'sms', tags: { t: '1' }, properties: { p: 'q' }, messageCount: 0 })
      expect((await store.listParticipants(integrationId, conversation.id, { limit: 10 })).items).toEqual([])
      expect((await store.getConversation(integrationId, conversation.id))?.ownerId).toBeNull()
      await expect(store.botChat.createConversation({ integrationId, id: conversation.id, channel: 'sms', tags: {}, now })).rejects.toBeInstanceOf(UniqueViolation)

      const owner = await store.createUser({ integrationId, id: uid('owner'), now: ++now })
      const chatConversation = await store.createConversation(integrationId, uid('chat'), owner.id, ++now)
      expect(chatConversation.ownerId).toBe(owner.id)
      expect(await store.botChat.getConversation([integrationId], chatConversation.id)).toMatchObject({ ownerId: owner.id, channel: 'channel', tags: {} })

      await store.appendMessage(newMessage(integrationId, conversation.id, botId, ++now))
      const updated = await store.botChat.updateConversation(integrationId, conversation.id, { tags: { t: null, u: '2' }, properties: { p: '' } }, ++now)
      expect(updated).toMatchObject({ tags: { u: '2' }, properties: null, messageCount: 1 })
      expect((await store.botChat.findConversation(integrationId, 'sms', { u: '2' }))?.id).toBe(conversation.id)
      expect(await store.botChat.findConversation(integrationId, 'channel', { u: '2' })).toBeUndefined()
    })

    it('listConversations: tags (AND), participants, channel, dates, message counts, sort and keyset paging', async () => {
      const run = uid('run')
      const user = await store.createUser({ integrationId, id: uid('p'), now: ++now })
      const ids: string[] = []
      for (let i = 0; i < 5; i++) {
        const c = await store.botChat.createConversation({ integrationId, id: uid('lc'), channel: i % 2 ? 'odd' : 'even', tags: { run, i: String(i) }, now: ++now })
        ids.push(c.id)
        for (let m = 0; m < i; m++) await store.appendMessage(newMessage(integrationId, c.id, botId, ++now))
      }
      await store.addParticipant(integrationId, ids[3]!, user.id, ++now)
      const list = async (f: object, limit = 100) => (await store.botChat.listConversations({ integrationIds: [integrationId], sortField: 'createdAt', sortDirection: 'asc', tags: { run }, ...f }, { limit })).items.map((c) => c.id)
      expect(await list({})).toEqual(ids)
      expect(await list({ tags: { run, i: '2' } })).toEqual([ids[2]])
      expect(await list({ channel: 'odd' })).toEqual([ids[1], ids[3]])
      expect(await list({ participantIds: [user.id] })).toEqual([ids[3]])
      expect(await list({ minMessageCount: 2, maxMessageCount: 3 })).toEqual([ids[2], ids[3]])
      const created = await Promise.all(ids.map((id) => store.botChat.getConversation([integrationId], id)))
      expect(await list({ afterDate: created[1]!.createdAt, beforeDate: created[4]!.createdAt })).toEqual([ids[2], ids[3]])
      expect(await list({ sortDirection: 'desc' })).toEqual([...ids].reverse())
      // Keyset pages of 2, by updatedAt (appends move updatedAt).
      const seen: string[] = []
      let after: string | undefined
      do {
        const page = await store.botChat.listConversations({ integrationIds: [integrationId], tags: { run }, sortField: 'updatedAt', sortDirection: 'desc' }, { after, limit: 2 })
        seen.push(...page.items.map((c) => c.id))
        after = page.next
      } while (after)
      expect(seen.sort()).toEqual([...ids].sort())
      expect((await store.botChat.getConversation([integrationId], ids[4]!))?.messageCount).toBe(4)
    })

    it('messages: tags added after the append, found, patched, listed newest first with filters; deleted with their tags', async () => {
      const c = await store.botChat.createConversation({ integrationId, id: uid('mc'), channel: 'channel', tags: {}, now: ++now })
      const appended = []
      for (let i = 0; i < 4; i++) appended.push((await store.appendMessage(newMessage(integrationId, c.id, botId, ++now, { type: 'text', text: `m${i}` })))!)
      expect(await store.botChat.tagMessage(integrationId, appended[1]!.id, { ref: 'r1', k: 'v' })).toBe(true)
      expect(await store.botChat.tagMessage(integrationId, 'missing', { ref: 'x' })).toBe(false)
      expect(await store.botChat.getMessage([integrationId], appended[1]!.id)).toMatchObject({ tags: { ref: 'r1', k: 'v' }, updatedAt: appended[1]!.createdAt })
      expect((await store.botChat.findMessage(integrationId, c.id, { ref: 'r1' }))?.id).toBe(appended[1]!.id)

      const updated = await store.botChat.updateMessage(integrationId, appended[1]!.id, { payload: { type: 'text', text: 'edited' }, tags: { k: null } }, ++now)
      expect(updated).toMatchObject({ payload: { type: 'text', text: 'edited' }, tags: { ref: 'r1' }, updatedAt: now })
      // metadata (the Chat API's feedback lives there): replaced whole, or cleared; other patches leave it alone.
      expect(await store.botChat.updateMessage(integrationId, appended[1]!.id, { metadata: { feedback: { value: 'positive' } } }, ++now)).toMatchObject({ metadata: { feedback: { value: 'positive' } }, payload: { text: 'edited' } })
      expect((await store.getMessage(integrationId, appended[1]!.id))!.metadata).toEqual({ feedback: { value: 'positive' } })
      expect(await store.botChat.updateMessage(integrationId, appended[1]!.id, { tags: { k: 'again' } }, ++now)).toMatchObject({ metadata: { feedback: { value: 'positive' } } })
      expect(await store.botChat.updateMessage(integrationId, appended[1]!.id, { metadata: null, tags: { k: null } }, ++now)).toMatchObject({ metadata: null, tags: { ref: 'r1' } })

      const page1 = await store.botChat.listMessages({ integrationIds: [integrationId], conversationId: c.id }, { limit: 3 })
      expect(page1.items.map((m) => m.id)).toEqual([appended[3]!.id, appended[2]!.id, appended[1]!.id])
      const page2 = await store.botChat.listMessages({ integrationIds: [integrationId], conversationId: c.id }, { after: page1.next, limit: 3 })
      expect(page2).toEqual({ items: [expect.objectContaining({ id: appended[0]!.id })], next: undefined })
      expect((await store.botChat.listMessages({ integrationIds: [integrationId], tags: { ref: 'r1' } }, { limit: 10 })).items.map((m) => m.id)).toEqual([appended[1]!.id])
      expect((await store.botChat.listMessages({ integrationIds: [integrationId], conversationId: c.id, afterDate: appended[2]!.createdAt }, { limit: 10 })).items.map((m) => m.id)).toEqual([appended[3]!.id])

      await store.deleteMessage(integrationId, appended[1]!.id, ++now)
      expect((await store.botChat.listMessages({ integrationIds: [integrationId], tags: { ref: 'r1' } }, { limit: 10 })).items).toEqual([])
      expect(await store.botChat.listTagValues([integrationId], 'message', 'ref', { limit: 10 })).toEqual({ items: [] })
    })

    it('one conversation\'s messages: every page size, date bound and token (its message since deleted too) list what a filter of all of them lists', async () => {
      const c = await store.botChat.createConversation({ integrationId, id: uid('lc'), channel: 'channel', tags: {}, now: ++now })
      const other = await store.botChat.createConversation({ integrationId, id: uid('lo'), channel: 'channel', tags: {}, now: ++now })
      // Several appends at one `now` (createdAt still grows by 1 ms each), gaps in time, and seqs taken by events and
      // deleted messages, so the seq index has holes; another conversation's messages in between.
      const base = now + 1_000
      const kept: { id: string; createdAt: number }[] = []
      for (let i = 0; i < 23; i++) {
        const at = base + [0, 0, 0, 5, 5, 40, 41, 41, 200][i % 9]! + Math.floor(i / 9) * 1_000
        const m = (await store.appendMessage(newMessage(integrationId, c.id, botId, at, { type: 'text', text: `m${i}` })))!
        if (i % 4 === 1) await store.appendEvent({ id: uid('ev'), integrationId, conversationId: c.id, userId: botId, isBot: true, payload: { n: i }, now: at })
        if (i % 5 === 2) await store.appendMessage(newMessage(integrationId, other.id, botId, at))
        if (i % 7 === 3) await store.deleteMessage(integrationId, m.id, at)
        else kept.push({ id: m.id, createdAt: m.createdAt })
      }
      now = base + 10_000
      const newestFirst = [...kept].sort((a, b) => b.createdAt - a.createdAt)
      const list = async (filter: { afterDate?: number; beforeDate?: number }, limit: number) => {
        const ids: string[] = []
        let after: string | undefined
        for (let pages = 0; pages < 50; pages++) {
          const page = await store.botChat.listMessages({ integrationIds: [integrationId], conversationId: c.id, ...filter }, { limit, ...(after !== undefined && { after }) })
          ids.push(...page.items.map((m) => m.id))
          after = page.next
          if (after === undefined) return ids
        }
        throw new Error('the listing did not end')
      }
      for (const limit of [1, 2, 3, 7, 100]) expect(await list({}, limit)).toEqual(newestFirst.map((m) => m.id))
      const dates = [...new Set(kept.flatMap((m) => [m.createdAt - 1, m.createdAt, m.createdAt + 1]).concat([base - 10, now]))]
      for (const d of dates) {
        expect(await list({ afterDate: d }, 4), `afterDate ${d}`).toEqual(newestFirst.filter((m) => m.createdAt > d).map((m) => m.id))
        expect(await list({ beforeDate: d }, 4), `beforeDate ${d}`).toEqual(newestFirst.filter((m) => m.createdAt < d).map((m) => m.id))
      }
      const [from, to] = [kept[4]!.createdAt, kept[15]!.createdAt]
      expect(await list({ afterDate: from, beforeDate: to }, 2)).toEqual(newestFirst.filter((m) => m.createdAt > from && m.createdAt < to).map((m) => m.id))
      expect(await list({ afterDate: to, beforeDate: from }, 2)).toEqual([])

      // The token's message deleted between two pages: the next page starts below where it was.
      const first = await store.botChat.listMessages({ integrationIds: [integrationId], conversationId: c.id }, { limit: 5 })
      const lastShown = first.items[4]!
      await store.deleteMessage(integrationId, lastShown.id, ++now)
      const rest = await store.botChat.listMessages({ integrationIds: [integrationId], conversationId: c.id }, { limit: 100, after: first.next })
      expect(rest.items.map((m) => m.id)).toEqual(newestFirst.slice(5).map((m) => m.id))
    })

    it('lists across integrations: one keyset order over both, pages of 1 in both directions, the same id and time in each integration listed twice', async () => {
      const run = uid('x')
      const at = ++now
      const shared = uid('same')
      // The same id and the same createdAt in both integrations (ids are unique per integration only), and one more each.
      const rows = [
        await store.botChat.createConversation({ integrationId, id: shared, channel: 'channel', tags: { run }, now: at }),
        await store.botChat.createConversation({ integrationId: otherIntegrationId, id: shared, channel: 'channel', tags: { run }, now: at }),
        await store.botChat.createConversation({ integrationId, id: uid('a'), channel: 'channel', tags: { run }, now: ++now }),
        await store.botChat.createConversation({ integrationId: otherIntegrationId, id: uid('b'), channel: 'channel', tags: { run, side: 'b' }, now: ++now }),
      ]
      await store.botChat.createUser({ integrationId, id: shared, now: at, tags: { run } })
      await store.botChat.createUser({ integrationId: otherIntegrationId, id: shared, now: at, tags: { run, side: 'b' } })
      const both = [integrationId, otherIntegrationId]
      const key = (c: { integrationId: string; id: string }) => `${c.integrationId}/${c.id}`
      for (const sortDirection of ['asc', 'desc'] as const) {
        const seen: string[] = []
        let after: string | undefined
        do {
          const page = await store.botChat.listConversations({ integrationIds: both, tags: { run }, sortField: 'createdAt', sortDirection }, { after, limit: 1 })
          seen.push(...page.items.map(key))
          after = page.next
        } while (after)
        expect(seen).toHaveLength(4)
        expect(new Set(seen)).toEqual(new Set(rows.map(key)))
        // Oldest first when ascending: the two conversations of the same instant come first.
        expect(sortDirection === 'asc' ? seen.slice(2) : seen.slice(0, 2)).toEqual(sortDirection === 'asc' ? [key(rows[2]!), key(rows[3]!)] : [key(rows[3]!), key(rows[2]!)])
      }
      // Tags come from each row's own integration.
      const listed = (await store.botChat.listConversations({ integrationIds: both, tags: { run }, sortField: 'createdAt', sortDirection: 'asc' }, { limit: 10 })).items
      expect(listed.filter((c) => c.tags.side === 'b').map(key)).toEqual([key(rows[3]!)])
      const users = (await store.botChat.listUsers({ integrationIds: both, tags: { run }, rangeField: 'createdAt', sortField: 'createdAt', sortDirection: 'desc' }, { limit: 1 }))
      const rest = await store.botChat.listUsers({ integrationIds: both, tags: { run }, rangeField: 'createdAt', sortField: 'createdAt', sortDirection: 'desc' }, { after: users.next, limit: 1 })
      expect([...users.items, ...rest.items].map((u) => `${u.integrationId}:${JSON.stringify(u.tags)}`).sort())
        .toEqual([`${integrationId}:${JSON.stringify({ run })}`, `${otherIntegrationId}:${JSON.stringify({ run, side: 'b' })}`].sort())
      expect(rest.next).toBeUndefined()
      expect((await store.botChat.listTagValues(both, 'conversation', 'side', { limit: 10 })).items).toEqual(['b'])
    })

    it('listTagValues: distinct, ascending, paged, per kind and per integration', async () => {
      const key = uid('key')
      for (const v of ['b', 'a', 'c', 'a']) await store.botChat.createUser({ integrationId, id: uid('tv'), now: ++now, tags: { [key]: v } })
      await store.botChat.createUser({ integrationId: otherIntegrationId, id: uid('tv'), now: ++now, tags: { [key]: 'elsewhere' } })
      const first = await store.botChat.listTagValues([integrationId], 'user', key, { limit: 2 })
      expect(first.items).toEqual(['a', 'b'])
      expect(await store.botChat.listTagValues([integrationId], 'user', key, { after: first.next, limit: 2 })).toEqual({ items: ['c'] })
      expect((await store.botChat.listTagValues([integrationId], 'conversation', key, { limit: 2 })).items).toEqual([])
    })
  })
}
