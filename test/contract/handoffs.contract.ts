/**
 * Contract of HandoffStore (src/store/handoff-store.ts), run against each engine: one open handoff per
 * conversation (concurrent opens resolve to one row), claims atomic across instances (on PostgreSQL two
 * connection pools, as two instances would have, race for one claim and exactly one wins), ending,
 * notes, listing by status with keyset pages, timings.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import type { NewHandoff } from '../../src/store/handoff-store.js'
import { seed } from './store.contract.js'

/** `second` is another handle on the same database (another instance's pool), or the same store. */
export type HandoffStoreFactory = () => Promise<{ store: Store; second: Store; cleanup: () => Promise<void> }>

export function describeHandoffContract(name: string, factory: HandoffStoreFactory): void {
  describe(`HandoffStore contract: ${name}`, () => {
    let store: Store
    let second: Store
    let cleanup: () => Promise<void>
    let integrationId: string
    let botId: string
    let at = 1_000_000

    const handoff = (over: Partial<NewHandoff> = {}): NewHandoff => ({
      id: randomUUID(), botId, integrationId, conversationId: `conv-${randomUUID()}`, userId: 'user-1', reason: null, requestedAt: ++at, ...over,
    })

    beforeAll(async () => {
      ;({ store, second, cleanup } = await factory())
      const fx = await seed(store)
      integrationId = fx.a.id
      botId = fx.bot.id
    })
    afterAll(async () => cleanup?.())

    it('open: a new handoff waits; a second open of the same conversation returns the open one', async () => {
      const h = handoff({ reason: 'asked for a human' })
      const first = await store.handoffs.open(h)
      expect(first.created).toBe(true)
      expect(first.handoff).toEqual({ ...h, status: 'waiting', claimedBy: null, claimedName: null, claimedAt: null, endedAt: null })
      const again = await second.handoffs.open(handoff({ conversationId: h.conversationId }))
      expect(again).toEqual({ handoff: first.handoff, created: false })
      expect(await store.handoffs.getOpen(integrationId, h.conversationId)).toEqual(first.handoff)
      expect(await store.handoffs.latest(botId, h.conversationId)).toEqual(first.handoff)
    })

    it('open: concurrent opens of one conversation from two instances make one handoff', async () => {
      const conversationId = `conv-${randomUUID()}`
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : store).handoffs.open(handoff({ conversationId }))))
      expect(results.filter((r) => r.created)).toHaveLength(1)
      expect(new Set(results.map((r) => r.handoff.id)).size).toBe(1)
    })

    it('claim: free → claimed; the same member again → still theirs; another member → taken; ended → closed', async () => {
      const { handoff: h } = await store.handoffs.open(handoff())
      const c = await store.handoffs.claim(h.id, 'member-a', 'Ada', 5_000)
      expect(c).toEqual({ outcome: 'claimed', handoff: { ...h, status: 'active', claimedBy: 'member-a', claimedName: 'Ada', claimedAt: 5_000 } })
      expect(await store.handoffs.claim(h.id, 'member-a', 'Ada', 6_000)).toEqual(c)
      const taken = await second.handoffs.claim(h.id, 'member-b', 'Bob', 7_000)
      expect(taken).toEqual({ outcome: 'taken', handoff: c.outcome === 'claimed' ? c.handoff : undefined })
      const ended = await store.handoffs.end(h.id, 8_000)
      expect(ended).toMatchObject({ status: 'ended', endedAt: 8_000, claimedBy: 'member-a' })
      expect(await store.handoffs.end(h.id, 9_000)).toBeUndefined()
      expect(await store.handoffs.claim(h.id, 'member-b', 'Bob', 9_000)).toEqual({ outcome: 'closed' })
      expect(await store.handoffs.claim(randomUUID(), 'member-b', 'Bob', 9_000)).toEqual({ outcome: 'closed' })
      expect(await store.handoffs.getOpen(integrationId, h.conversationId)).toBeUndefined()
      // Ended: a new handoff of the conversation may open, and is the latest.
      const next = await store.handoffs.open(handoff({ conversationId: h.conversationId }))
      expect(next.created).toBe(true)
      expect((await store.handoffs.latest(botId, h.conversationId))?.id).toBe(next.handoff.id)
      await store.handoffs.end(next.handoff.id, 10_000)
      expect((await store.handoffs.latest(botId, h.conversationId))?.id).toBe(next.handoff.id)
    })

    it('coveredAt: from a handoff\'s request (included) to its end (excluded); open ones cover what follows', async () => {
      const conversationId = `conv-${randomUUID()}`
      const { handoff: h } = await store.handoffs.open(handoff({ conversationId, requestedAt: 50_000 }))
      expect(await store.handoffs.coveredAt(integrationId, conversationId, 49_999)).toBe(false)
      expect(await store.handoffs.coveredAt(integrationId, conversationId, 50_000)).toBe(true)
      expect(await second.handoffs.coveredAt(integrationId, conversationId, 10 ** 12)).toBe(true)
      await store.handoffs.end(h.id, 60_000)
      expect(await store.handoffs.coveredAt(integrationId, conversationId, 59_999)).toBe(true)
      expect(await store.handoffs.coveredAt(integrationId, conversationId, 60_000)).toBe(false)
      expect(await store.handoffs.coveredAt(integrationId, `other-${conversationId}`, 55_000)).toBe(false)
    })

    it('claim: members racing from two instances for one handoff: exactly one wins', async () => {
      for (let round = 0; round < 5; round++) {
        const { handoff: h } = await store.handoffs.open(handoff())
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? second : store).handoffs.claim(h.id, `member-${i}`, `M${i}`, 20_000 + i)))
        const winners = results.filter((r) => r.outcome === 'claimed')
        expect(winners).toHaveLength(1)
        const winner = winners[0]!.outcome === 'claimed' ? winners[0]!.handoff : undefined
        for (const r of results) expect(r.outcome === 'closed' ? undefined : r.handoff.claimedBy).toBe(winner?.claimedBy)
      }
    })

    it('list: by status, oldest request first, in keyset pages; notes and timings', async () => {
      const fx = await seed(store)
      const other = { botId: fx.bot.id, integrationId: fx.a.id }
      const made = []
      for (let i = 0; i < 5; i++) made.push((await store.handoffs.open(handoff({ ...other, requestedAt: 100 + i }))).handoff)
      await store.handoffs.claim(made[1]!.id, 'm', 'M', 200)
      await store.handoffs.end(made[2]!.id, 300)
      const all = []
      let after: string | undefined
      do {
        const page = await store.handoffs.list(fx.bot.id, undefined, { after, limit: 2 })
        all.push(...page.items)
        after = page.next
      } while (after)
      expect(all.map((h) => h.id)).toEqual(made.map((h) => h.id))
      expect((await store.handoffs.list(fx.bot.id, 'waiting', { limit: 10 })).items.map((h) => h.id)).toEqual([made[0]!.id, made[3]!.id, made[4]!.id])
      expect((await store.handoffs.list(fx.bot.id, 'active', { limit: 10 })).items.map((h) => h.id)).toEqual([made[1]!.id])
      expect((await store.handoffs.list(fx.bot.id, 'ended', { limit: 10 })).items.map((h) => h.id)).toEqual([made[2]!.id])
      expect((await store.handoffs.list(botId, undefined, { limit: 100 })).items.some((h) => h.botId !== botId)).toBe(false)

      await store.handoffs.addNote({ id: randomUUID(), handoffId: made[1]!.id, memberId: 'm', text: 'first', createdAt: 1 })
      await second.handoffs.addNote({ id: randomUUID(), handoffId: made[1]!.id, memberId: 'n', text: 'second', createdAt: 2 })
      expect((await store.handoffs.notes(made[1]!.id, 10)).map((n) => [n.memberId, n.text])).toEqual([['m', 'first'], ['n', 'second']])
      const grouped = await store.handoffs.notesOf([made[0]!.id, made[1]!.id], 1)
      expect(grouped.get(made[1]!.id)?.map((n) => n.text)).toEqual(['first'])
      expect(grouped.get(made[0]!.id)).toBeUndefined()

      const timings = await store.handoffs.timings(fx.bot.id, 101, 103)
      expect(timings.sort((a, b) => a.requestedAt - b.requestedAt)).toEqual([
        { requestedAt: 101, claimedAt: 200, endedAt: null },
        { requestedAt: 102, claimedAt: null, endedAt: 300 },
      ])
    })

    it('a forged page token is a 400, never a query error', async () => {
      await expect(store.handoffs.list(botId, undefined, { after: 'bm90LWEtdG9rZW4', limit: 2 })).rejects.toMatchObject({ status: 400 })
    })

    it('deleting the bot deletes its handoffs and their notes', async () => {
      const fx = await seed(store)
      const { handoff: h } = await store.handoffs.open(handoff({ botId: fx.bot.id, integrationId: fx.a.id }))
      await store.handoffs.addNote({ id: randomUUID(), handoffId: h.id, memberId: 'm', text: 'x', createdAt: 1 })
      await store.deleteBot(fx.bot.id)
      expect(await store.handoffs.latest(fx.bot.id, h.conversationId)).toBeUndefined()
      expect(await store.handoffs.notes(h.id, 10)).toEqual([])
    })
  })
}
