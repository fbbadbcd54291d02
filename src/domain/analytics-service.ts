import type { LlmUsage } from './llm/llm-usage.js'
import { errors } from '../lib/errors.js'
import type { DayCount, DayKeyCount } from '../store/analytics-store.js'
import type { LlmDay, Stats } from '../store/llm-store.js'
import type { Store } from '../store/store.js'
import type { BotService } from './bot-service.js'

const DAY_MS = 86_400_000

/** getBotAnalytics: the longest range answered in one call, and what separates two sessions of a user. */
export const ANALYTICS_LIMITS = { maxDays: 366, sessionGapMs: 30 * 60_000 }

/** One day of a bot's activity, in the record shape of `@botpress/client`'s getBotAnalytics. */
export interface AnalyticsRecord {
  startDateTimeUtc: string
  endDateTimeUtc: string
  returningUsers: number
  newUsers: number
  sessions: number
  /** Deprecated in the client: the same as userMessages. */
  messages: number
  userMessages: number
  botMessages: number
  events: number
  eventTypes: Record<string, number>
  customEvents: Record<string, number>
  /** The bot's calls through the LLM gateway: latency and tokens per second over those without error (llm-store.ts). */
  llm: Omit<LlmDay, 'day'>
}

/**
 * One day of how well a bot served (getBotQualityAnalytics; the console's dashboard). Parley's own record, beside
 * getBotAnalytics' (whose @botpress/client shape has no place for these).
 */
export interface QualityRecord {
  startDateTimeUtc: string
  endDateTimeUtc: string
  /** Handoffs requested that day, and how many of them an agent has claimed since. */
  handoffsRequested: number
  handoffsClaimed: number
  /** Wait (request → claim) of those claimed, in seconds: mean and longest; 0 when none was claimed. */
  handoffWaitMeanSeconds: number
  handoffWaitMaxSeconds: number
  /** Conversation turns whose bot code failed (threw, ran out of memory, crashed) / was stopped at its time budget. */
  failedTurns: number
  timedOutTurns: number
  /** Knowledge searches of bot code, and those where no passage reached the relevance threshold. */
  knowledgeSearches: number
  knowledgeNoAnswer: number
  /** Thumbs up / down on the bot's messages written that day. */
  positiveFeedback: number
  negativeFeedback: number
}

const zeroStats = (): Stats => ({ mean: 0, sd: 0, min: 0, max: 0 })

/** A date or date-time of the query (ISO 8601), as its UTC day number. */
function dayOf(value: string, name: string): number {
  const ms = typeof value === 'string' && value.length <= 64 ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(ms)) throw errors.invalidQuery(`${name} must be an ISO 8601 date or date-time (e.g. 2026-11-26 or 2026-11-26T00:00:00Z), got ${JSON.stringify(String(value).slice(0, 64))}`)
  return Math.floor(ms / DAY_MS)
}

/**
 * getBotAnalytics: a bot's activity per UTC day, computed from what is stored (messages, users, events,
 * trackAnalytics counters, the LLM gateway's calls: docs/llm-usage.md#analytics).
 */
export class AnalyticsService {
  /** `llmUsage`: whose records not yet stored the LLM figures wait for (LlmUsage.settled). */
  constructor(private readonly store: Store, private readonly bots: BotService, private readonly llmUsage?: Pick<LlmUsage, 'settled'>) {}

  /** The bot (of the workspace) and the range as day numbers, checked. */
  private async range(workspaceId: string, botId: string, startDate: string, endDate: string) {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const first = dayOf(startDate, 'startDate')
    const last = dayOf(endDate, 'endDate')
    if (last < first) throw errors.invalidQuery(`endDate (${endDate}) is before startDate (${startDate})`)
    if (last - first + 1 > ANALYTICS_LIMITS.maxDays) throw errors.invalidQuery(`The range covers ${last - first + 1} days; at most ${ANALYTICS_LIMITS.maxDays} per call`)
    return { bot, first, last }
  }

  async botAnalytics(workspaceId: string, botId: string, startDate: string, endDate: string): Promise<AnalyticsRecord[]> {
    const { bot, first, last } = await this.range(workspaceId, botId, startDate, endDate)
    const a = await this.store.analytics.botActivity({ botId: bot.id, fromDay: first, toDay: last + 1, sessionGapMs: ANALYTICS_LIMITS.sessionGapMs })
    await this.llmUsage?.settled()
    const llm = new Map((await this.store.llm.botDays(bot.id, first, last + 1)).map(({ day, ...x }) => [day, x]))
    const byDay = (xs: DayCount[]) => new Map(xs.map((x) => [x.day, x.count]))
    const keyed = (xs: DayKeyCount[]) => {
      const m = new Map<number, Record<string, number>>()
      for (const x of xs) {
        const o = m.get(x.day) ?? {}
        o[x.key] = (o[x.key] ?? 0) + x.count
        m.set(x.day, o)
      }
      return m
    }
    const user = byDay(a.userMessages), botMsgs = byDay(a.botMessages), fresh = byDay(a.newUsers), back = byDay(a.returningUsers), sessions = byDay(a.sessions)
    const events = keyed(a.events), custom = keyed(a.custom)
    const records: AnalyticsRecord[] = []
    for (let day = first; day <= last; day++) {
      const eventTypes = events.get(day) ?? {}
      records.push({
        startDateTimeUtc: new Date(day * DAY_MS).toISOString(),
        endDateTimeUtc: new Date((day + 1) * DAY_MS - 1).toISOString(),
        returningUsers: back.get(day) ?? 0,
        newUsers: fresh.get(day) ?? 0,
        sessions: sessions.get(day) ?? 0,
        messages: user.get(day) ?? 0,
        userMessages: user.get(day) ?? 0,
        botMessages: botMsgs.get(day) ?? 0,
        events: Object.values(eventTypes).reduce((s, n) => s + n, 0),
        eventTypes,
        customEvents: custom.get(day) ?? {},
        llm: llm.get(day) ?? { calls: 0, errors: 0, inputTokens: 0, outputTokens: 0, latency: zeroStats(), tokensPerSecond: zeroStats(), cost: { sum: 0, ...zeroStats() } },
      })
    }
    return records
  }

  /** Handoffs and their waits, failed and timed-out turns, unanswered knowledge searches and feedback, per UTC day. */
  async botQuality(workspaceId: string, botId: string, startDate: string, endDate: string): Promise<QualityRecord[]> {
    const { bot, first, last } = await this.range(workspaceId, botId, startDate, endDate)
    const q = await this.store.analytics.botQuality({ botId: bot.id, fromDay: first, toDay: last + 1 })
    const handoffs = new Map(q.handoffs.map((x) => [x.day, x]))
    const knowledge = new Map(q.knowledge.map((x) => [x.day, x]))
    const count = (xs: DayKeyCount[], day: number, keys: string[]) => xs.filter((x) => x.day === day && keys.includes(x.key)).reduce((s, x) => s + x.count, 0)
    const seconds = (ms: number) => Math.round(ms) / 1000
    const records: QualityRecord[] = []
    for (let day = first; day <= last; day++) {
      const h = handoffs.get(day)
      const k = knowledge.get(day)
      records.push({
        startDateTimeUtc: new Date(day * DAY_MS).toISOString(),
        endDateTimeUtc: new Date((day + 1) * DAY_MS - 1).toISOString(),
        handoffsRequested: h?.requested ?? 0,
        handoffsClaimed: h?.claimed ?? 0,
        handoffWaitMeanSeconds: h && h.claimed > 0 ? seconds(h.waitMeanMs) : 0,
        handoffWaitMaxSeconds: h && h.claimed > 0 ? seconds(h.waitMaxMs) : 0,
        failedTurns: count(q.turnFailures, day, ['error', 'memory', 'crashed']),
        timedOutTurns: count(q.turnFailures, day, ['timeout']),
        knowledgeSearches: k?.searches ?? 0,
        knowledgeNoAnswer: k?.noAnswer ?? 0,
        positiveFeedback: count(q.feedback, day, ['positive']),
        negativeFeedback: count(q.feedback, day, ['negative']),
      })
    }
    return records
  }
}
