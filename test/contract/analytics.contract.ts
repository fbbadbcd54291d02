/**
 * Contract of AnalyticsStore (src/store/analytics-store.ts), run against each engine: a bot's activity
 * per UTC day, checked against the same counts made here in plain TypeScript over generated traffic
 * (users created before and inside the range, sessions split by gaps and running over midnight, bot
 * messages, another bot's traffic that must not count, chat events and trackAnalytics counters).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BotActivity } from '../../src/store/analytics-store.js'
import type { Store } from '../../src/store/store.js'
import { newMessage, seed } from './store.contract.js'

export type AnalyticsStoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>

const DAY = 86_400_000
const GAP = 30 * 60_000
const FIRST_DAY = Math.floor(Date.UTC(2026, 0, 10) / DAY)

interface Msg { conv: string; user: string; isBot: boolean; at: number }
interface User { id: string; createdAt: number; isBot: boolean }

/** A deterministic pseudo-random sequence (the same traffic on every engine and run). */
function lcg(seed: number) {
  let x = seed
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
}

/** The counts of BotActivity, made the plain way. */
function reference(users: User[], msgs: Msg[], fromDay: number, toDay: number) {
  const inRange = (at: number) => at >= fromDay * DAY && at < toDay * DAY
  const day = (at: number) => Math.floor(at / DAY)
  const inc = (m: Map<number, number>, d: number) => m.set(d, (m.get(d) ?? 0) + 1)
  const userMessages = new Map<number, number>(), botMessages = new Map<number, number>(), newUsers = new Map<number, number>()
  const sessions = new Map<number, number>()
  const returning = new Map<number, Set<string>>()
  const created = new Map(users.map((u) => [u.id, u.createdAt]))
  for (const u of users) if (!u.isBot && inRange(u.createdAt)) inc(newUsers, day(u.createdAt))
  for (const m of msgs) {
    if (!inRange(m.at)) continue
    inc(m.isBot ? botMessages : userMessages, day(m.at))
    if (!m.isBot && created.get(m.user)! < day(m.at) * DAY) returning.set(day(m.at), (returning.get(day(m.at)) ?? new Set()).add(m.user))
  }
  const byThread = new Map<string, number[]>()
  for (const m of msgs) if (!m.isBot) byThread.set(`${m.conv}/${m.user}`, [...(byThread.get(`${m.conv}/${m.user}`) ?? []), m.at])
  for (const times of byThread.values()) {
    times.sort((a, b) => a - b)
    times.forEach((t, i) => { if (inRange(t) && (i === 0 || t - times[i - 1]! > GAP)) inc(sessions, day(t)) })
  }
  const list = (m: Map<number, number>) => [...m].map(([d, count]) => ({ day: d, count })).sort((a, b) => a.day - b.day)
  return {
    userMessages: list(userMessages), botMessages: list(botMessages), newUsers: list(newUsers), sessions: list(sessions),
    returningUsers: [...returning].map(([d, s]) => ({ day: d, count: s.size })).sort((a, b) => a.day - b.day),
  }
}

const sorted = (xs: { day: number; count: number }[]) => [...xs].sort((a, b) => a.day - b.day)

export function describeAnalyticsContract(name: string, factory: AnalyticsStoreFactory): void {
  describe(`AnalyticsStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let botId: string
    let otherBotId: string
    const users: User[] = []
    const msgs: Msg[] = []

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      const before = (FIRST_DAY - 3) * DAY
      const { bot, a } = await seed(store, before)
      botId = bot.id
      const other = await seed(store, before)
      otherBotId = other.bot.id
      const rnd = lcg(42)
      await store.createUser({ integrationId: a.id, id: 'the-bot', isBot: true, now: before })
      users.push({ id: 'the-bot', createdAt: before, isBot: true })
      // 12 users: some created days before the range, the others inside it
      for (let i = 0; i < 12; i++) {
        const createdAt = i < 4 ? before + i * 3_600_000 : (FIRST_DAY + Math.floor(rnd() * 4)) * DAY + Math.floor(rnd() * 20) * 3_600_000
        await store.createUser({ integrationId: a.id, id: `u${i}`, now: createdAt })
        users.push({ id: `u${i}`, createdAt, isBot: false })
      }
      // each user writes in one or two conversations, in bursts separated by short or long gaps, each message answered
      let c = 0
      for (const u of users.filter((x) => !x.isBot)) {
        for (let k = 0; k < 1 + Math.floor(rnd() * 2); k++) {
          const conv = `conv${c++}`
          let at = u.createdAt + Math.floor(rnd() * 6) * 3_600_000 + 60_000
          await store.createConversation(a.id, conv, u.id, at)
          const n = 3 + Math.floor(rnd() * 8)
          for (let j = 0; j < n; j++) {
            msgs.push({ conv, user: u.id, isBot: false, at }, { conv, user: 'the-bot', isBot: true, at: at + 500 })
            // a gap of 10 min (same session), exactly 30 min (same), 31 min (new) or 7 h (new, often over midnight)
            at += [10 * 60_000, GAP, GAP + 60_000, 7 * 3_600_000][Math.floor(rnd() * 4)]!
          }
        }
      }
      // a session from just before the first day running over its midnight
      await store.createConversation(a.id, 'midnight', 'u0', FIRST_DAY * DAY - 20 * 60_000)
      msgs.push({ conv: 'midnight', user: 'u0', isBot: false, at: FIRST_DAY * DAY - 20 * 60_000 }, { conv: 'midnight', user: 'u0', isBot: false, at: FIRST_DAY * DAY + 5 * 60_000 })
      msgs.sort((x, y) => x.at - y.at)
      for (const m of msgs) await store.appendMessage({ ...newMessage(a.id, m.conv, m.user, m.at), isBot: m.isBot })
      // another bot's traffic on the same days: never counted for this one
      await store.createUser({ integrationId: other.a.id, id: 'x', now: FIRST_DAY * DAY + 1000 })
      await store.createConversation(other.a.id, 'xc', 'x', FIRST_DAY * DAY + 1000)
      await store.appendMessage(newMessage(other.a.id, 'xc', 'x', FIRST_DAY * DAY + 2000))
      await store.appendEvent({ id: 'evt_other', integrationId: other.a.id, conversationId: 'xc', userId: 'x', isBot: false, payload: { n: 1 }, now: FIRST_DAY * DAY + 3000 })
      // chat events and trackAnalytics counters
      await store.appendEvent({ id: 'evt_1', integrationId: a.id, conversationId: 'conv0', userId: 'u0', isBot: false, payload: { n: 1 }, now: (FIRST_DAY + 1) * DAY + 10 })
      await store.telemetry.addAnalytics(botId, 'signup', new Date((FIRST_DAY + 1) * DAY).toISOString().slice(0, 10), 3, 0)
      await store.telemetry.addAnalytics(botId, 'signup', new Date((FIRST_DAY + 1) * DAY).toISOString().slice(0, 10), 2, 0)
      await store.telemetry.addAnalytics(botId, 'outside', new Date((FIRST_DAY + 9) * DAY).toISOString().slice(0, 10), 1, 0)
      await store.telemetry.addAnalytics(otherBotId, 'signup', new Date((FIRST_DAY + 1) * DAY).toISOString().slice(0, 10), 100, 0)
    })
    afterAll(async () => cleanup?.())

    const activity = (fromDay: number, toDay: number): Promise<BotActivity> =>
      store.analytics.botActivity({ botId, fromDay, toDay, sessionGapMs: GAP })

    it('counts messages, new and returning users and sessions per UTC day as a plain count over the same traffic does', async () => {
      const got = await activity(FIRST_DAY, FIRST_DAY + 5)
      const want = reference(users, msgs, FIRST_DAY, FIRST_DAY + 5)
      expect(want.sessions.reduce((s, x) => s + x.count, 0)).toBeGreaterThan(10) // the traffic has sessions to count
      expect(want.returningUsers.length).toBeGreaterThan(0)
      expect(sorted(got.userMessages)).toEqual(want.userMessages)
      expect(sorted(got.botMessages)).toEqual(want.botMessages)
      expect(sorted(got.newUsers)).toEqual(want.newUsers)
      expect(sorted(got.returningUsers)).toEqual(want.returningUsers)
      expect(sorted(got.sessions)).toEqual(want.sessions)
    })

    it('a range that starts mid-traffic: a session begun the day before is not counted again', async () => {
      for (const from of [FIRST_DAY + 1, FIRST_DAY + 2]) {
        const got = await activity(from, from + 2)
        const want = reference(users, msgs, from, from + 2)
        expect(sorted(got.sessions)).toEqual(want.sessions)
        expect(sorted(got.userMessages)).toEqual(want.userMessages)
        expect(sorted(got.returningUsers)).toEqual(want.returningUsers)
      }
      // the midnight session started before the first day: the first day does not count it
      const first = await activity(FIRST_DAY, FIRST_DAY + 1)
      expect(first.sessions.find((s) => s.day === FIRST_DAY)?.count ?? 0).toBe(reference(users, msgs, FIRST_DAY, FIRST_DAY + 1).sessions[0]?.count ?? 0)
    })

    it('events and trackAnalytics counters by day, of this bot only', async () => {
      const got = await activity(FIRST_DAY, FIRST_DAY + 5)
      expect(got.custom).toEqual([{ day: FIRST_DAY + 1, key: 'signup', count: 5 }])
      expect(got.events).toEqual([{ day: FIRST_DAY + 1, key: 'custom', count: 1 }])
      const other = await store.analytics.botActivity({ botId: otherBotId, fromDay: FIRST_DAY, toDay: FIRST_DAY + 5, sessionGapMs: GAP })
      expect(other.userMessages).toEqual([{ day: FIRST_DAY, count: 1 }])
      expect(other.custom).toEqual([{ day: FIRST_DAY + 1, key: 'signup', count: 100 }])
      const none = await store.analytics.botActivity({ botId: 'no-such-bot', fromDay: FIRST_DAY, toDay: FIRST_DAY + 5, sessionGapMs: GAP })
      expect(Object.values(none).every((xs) => xs.length === 0)).toBe(true)
    })
  })
}
