/**
 * Contract of QualityStore (src/store/quality-store.ts) and AnalyticsStore.botQuality, run against each engine:
 * failed turns and knowledge searches recorded once per key, and the per-day series of handoffs (with their waits),
 * failed turns by reason, knowledge searches and feedback tags, checked against counts made here over the same rows;
 * another bot's rows and rows outside the range never count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import { newMessage, seed } from './store.contract.js'

export type QualityStoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>

const DAY = 86_400_000
const FIRST_DAY = Math.floor(Date.UTC(2026, 1, 3) / DAY)
const at = (day: number, hours: number) => (FIRST_DAY + day) * DAY + hours * 3_600_000

export function describeQualityContract(name: string, factory: QualityStoreFactory): void {
  describe(`QualityStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let botId: string
    let otherBotId: string

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      const { bot, a } = await seed(store, at(-5, 0))
      const other = await seed(store, at(-5, 0))
      botId = bot.id
      otherBotId = other.bot.id
      await store.createUser({ integrationId: a.id, id: 'u', now: at(-5, 0) })
      await store.createUser({ integrationId: a.id, id: 'bot', isBot: true, now: at(-5, 0) })
      // Handoffs: day 0 two (claimed after 30 s and 90 s) and one waiting; day 1 one claimed after 10 s; day 3 one (outside the range below).
      const handoff = async (conv: string, requested: number, waitMs: number | null, end = true) => {
        await store.createConversation(a.id, conv, 'u', requested - 1000)
        const { handoff: h } = await store.handoffs.open({ id: `h-${conv}`, botId, integrationId: a.id, conversationId: conv, userId: 'u', reason: null, requestedAt: requested })
        if (waitMs !== null) await store.handoffs.claim(h.id, 'agent', 'Agent', requested + waitMs)
        if (end) await store.handoffs.end(h.id, requested + (waitMs ?? 0) + 5000)
      }
      await handoff('h1', at(0, 9), 30_000)
      await handoff('h2', at(0, 15), 90_000)
      await handoff('h3', at(0, 23.9), null, false)
      await handoff('h4', at(1, 2), 10_000)
      await handoff('h5', at(3, 2), 1_000)
      // Failed turns: the same source twice counts once (a turn run again after a restart).
      const fail = (b: string, source: string, reason: 'error' | 'timeout' | 'memory' | 'crashed', when: number) =>
        store.quality.recordTurnFailure({ botId: b, sourceId: source, conversationId: 'h1', kind: 'message', reason, createdAt: when })
      await fail(botId, 'm1', 'error', at(0, 1))
      await fail(botId, 'm1', 'timeout', at(0, 2)) // ignored: recorded already
      await fail(botId, 'm2', 'timeout', at(0, 3))
      await fail(botId, 'm3', 'memory', at(1, 3))
      await fail(botId, 'm4', 'crashed', at(1, 4))
      await fail(botId, 'm5', 'error', at(3, 4))
      await fail(otherBotId, 'm1', 'error', at(0, 1))
      // Knowledge searches: 3 on day 0 (2 without answer), 1 on day 1; the same id twice counts once.
      const search = (b: string, id: string, noAnswer: boolean, when: number) =>
        store.quality.recordKnowledgeSearch({ botId: b, id, conversationId: null, query: `question ${id} ${'é'.repeat(600)}`, noAnswer, bestRelevance: noAnswer ? 0.1 : 0.8, createdAt: when })
      await search(botId, 'k1', true, at(0, 1))
      await search(botId, 'k1', false, at(0, 1)) // ignored
      await search(botId, 'k2', true, at(0, 2))
      await search(botId, 'k3', false, at(0, 3))
      await search(botId, 'k4', false, at(1, 3))
      await search(otherBotId, 'k1', true, at(0, 1))
      // Feedback tags on the bot's messages (by the message's day); a user message's tag does not count.
      await store.createConversation(a.id, 'fb', 'u', at(-1, 0))
      const message = async (isBot: boolean, when: number, feedback?: string) => {
        const m = await store.appendMessage({ ...newMessage(a.id, 'fb', isBot ? 'bot' : 'u', when), isBot })
        if (feedback) await store.botChat.updateMessage(a.id, m!.id, { tags: { feedback } }, when + 1000)
      }
      await message(true, at(0, 5), 'positive')
      await message(true, at(0, 6), 'positive')
      await message(true, at(0, 7), 'negative')
      await message(true, at(1, 7), 'negative')
      await message(true, at(1, 8), 'something else')
      await message(false, at(1, 9), 'positive')
      await message(true, at(3, 7), 'positive')
    })
    afterAll(async () => cleanup?.())

    it('counts each series per UTC day over the range, and nothing of another bot or outside the range', async () => {
      const q = await store.analytics.botQuality({ botId, fromDay: FIRST_DAY, toDay: FIRST_DAY + 3 })
      const byDay = <T extends { day: number }>(xs: T[]) => [...xs].sort((x, y) => x.day - y.day)
      expect(byDay(q.handoffs)).toEqual([
        { day: FIRST_DAY, requested: 3, claimed: 2, waitMeanMs: 60_000, waitMaxMs: 90_000 },
        { day: FIRST_DAY + 1, requested: 1, claimed: 1, waitMeanMs: 10_000, waitMaxMs: 10_000 },
      ])
      const keyed = (xs: { day: number; key: string; count: number }[]) => [...xs].sort((x, y) => x.day - y.day || x.key.localeCompare(y.key))
      expect(keyed(q.turnFailures)).toEqual([
        { day: FIRST_DAY, key: 'error', count: 1 }, { day: FIRST_DAY, key: 'timeout', count: 1 },
        { day: FIRST_DAY + 1, key: 'crashed', count: 1 }, { day: FIRST_DAY + 1, key: 'memory', count: 1 },
      ])
      expect(byDay(q.knowledge)).toEqual([{ day: FIRST_DAY, searches: 3, noAnswer: 2 }, { day: FIRST_DAY + 1, searches: 1, noAnswer: 0 }])
      expect(keyed(q.feedback)).toEqual([
        { day: FIRST_DAY, key: 'negative', count: 1 }, { day: FIRST_DAY, key: 'positive', count: 2 }, { day: FIRST_DAY + 1, key: 'negative', count: 1 },
      ])
    })

    it('an empty range, and another bot: empty series', async () => {
      expect(await store.analytics.botQuality({ botId, fromDay: FIRST_DAY + 10, toDay: FIRST_DAY + 12 })).toEqual({ handoffs: [], turnFailures: [], knowledge: [], feedback: [] })
      const other = await store.analytics.botQuality({ botId: otherBotId, fromDay: FIRST_DAY, toDay: FIRST_DAY + 3 })
      expect(other.turnFailures).toEqual([{ day: FIRST_DAY, key: 'error', count: 1 }])
      expect(other.knowledge).toEqual([{ day: FIRST_DAY, searches: 1, noAnswer: 1 }])
      expect(other.handoffs).toEqual([])
      expect(other.feedback).toEqual([])
    })
  })
}
