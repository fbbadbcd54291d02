/**
 * Read model of getBotAnalytics: counts per UTC day over what the other parts store (messages, users,
 * events, trackAnalytics counters), computed by the database (never the rows loaded into memory).
 * Days are numbered from the epoch: day = floor(ms / 86,400,000).
 */
export interface DayCount { day: number; count: number }
export interface DayKeyCount { day: number; key: string; count: number }

export interface BotActivityQuery {
  botId: string
  /** First day (inclusive) and the day after the last (exclusive), as day numbers. */
  fromDay: number
  toDay: number
  /** A user's messages in one conversation further apart than this start a new session. */
  sessionGapMs: number
}

export interface BotActivity {
  userMessages: DayCount[]
  botMessages: DayCount[]
  /** Users (not the bot's own) created that day. */
  newUsers: DayCount[]
  /** Distinct users who wrote that day and were created on an earlier day. */
  returningUsers: DayCount[]
  /** Sessions that started that day. */
  sessions: DayCount[]
  /** Runtime API events by type, and the Chat API's custom events (key `custom`). */
  events: DayKeyCount[]
  /** trackAnalytics counters by name. */
  custom: DayKeyCount[]
}

/** Per UTC day: how well the bot served (the console's dashboard; getBotQualityAnalytics). */
export interface BotQuality {
  /** Handoffs by the day of their request: requested, of those claimed, and the claimed ones' wait (claim − request, ms). */
  handoffs: Array<{ day: number; requested: number; claimed: number; waitMeanMs: number; waitMaxMs: number }>
  /** Failed conversation turns by reason (quality-store.ts TurnFailureReason). */
  turnFailures: DayKeyCount[]
  /** Knowledge searches of bot code: all, and those where no passage reached the threshold. */
  knowledge: Array<{ day: number; searches: number; noAnswer: number }>
  /** Feedback on the bot's messages by the rated message's day: key `positive` or `negative` (its `feedback` tag). */
  feedback: DayKeyCount[]
}

export interface AnalyticsStore {
  botActivity(query: BotActivityQuery): Promise<BotActivity>
  botQuality(query: Omit<BotActivityQuery, 'sessionGapMs'>): Promise<BotQuality>
}
