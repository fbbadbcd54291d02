import { sql, type Kysely } from 'kysely'
import type { AnalyticsStore, BotActivity, BotActivityQuery, BotQuality, DayCount, DayKeyCount } from '../analytics-store.js'

const DAY_MS = 86_400_000
/** Written into the statement (not a parameter): GROUP BY must repeat the SELECT's expression exactly. */
const D = sql.raw(String(DAY_MS))

/** YYYY-MM-DD of a day number (the runtime_analytics key). */
const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10)

/**
 * Both engines, the same statements: integer division of the millisecond timestamps gives the day (the
 * timestamps are positive integers on both), the session gaps come from a window function (SQLite ≥ 3.25).
 * Each count reads one index range: messages_created (integration_id, created_at), users_created,
 * runtime_events_bot, events_integration_created, and runtime_analytics' primary key.
 */
export class KyselyAnalyticsStore implements AnalyticsStore {
  constructor(private readonly db: Kysely<any>) {}

  async botActivity(q: BotActivityQuery): Promise<BotActivity> {
    const from = q.fromDay * DAY_MS
    const to = q.toDay * DAY_MS
    const integrations = sql`SELECT id FROM integrations WHERE bot_id = ${q.botId}`
    const counts = async (query: ReturnType<typeof sql>): Promise<DayCount[]> =>
      ((await query.execute(this.db)).rows as { day: unknown; count: unknown }[]).map((r) => ({ day: Number(r.day), count: Number(r.count) }))
    const keyed = async (query: ReturnType<typeof sql>): Promise<DayKeyCount[]> =>
      ((await query.execute(this.db)).rows as { day: unknown; key: unknown; count: unknown }[]).map((r) => ({ day: Number(r.day), key: String(r.key), count: Number(r.count) }))

    const messages = await keyed(sql`
      SELECT created_at / ${D} AS day, is_bot AS key, COUNT(*) AS count FROM messages
      WHERE integration_id IN (${integrations}) AND created_at >= ${from} AND created_at < ${to}
      GROUP BY created_at / ${D}, is_bot`)
    const newUsers = await counts(sql`
      SELECT created_at / ${D} AS day, COUNT(*) AS count FROM users
      WHERE integration_id IN (${integrations}) AND is_bot = 0 AND created_at >= ${from} AND created_at < ${to}
      GROUP BY created_at / ${D}`)
    // the day's distinct writers first, then their users: one join per writer and day, not per message
    const returningUsers = await counts(sql`
      SELECT w.d AS day, COUNT(*) AS count FROM (
        SELECT DISTINCT created_at / ${D} AS d, integration_id, user_id FROM messages
        WHERE integration_id IN (${integrations}) AND is_bot = 0 AND created_at >= ${from} AND created_at < ${to}
      ) w JOIN users u ON u.integration_id = w.integration_id AND u.id = w.user_id
      WHERE u.created_at < w.d * ${D}
      GROUP BY w.d`)
    // A session starts at a user's message with no earlier one of theirs in the conversation within the gap;
    // messages from one gap before the range are read so that a session running over midnight is not counted twice.
    const sessions = await counts(sql`
      SELECT d AS day, COUNT(*) AS count FROM (
        SELECT created_at / ${D} AS d, created_at,
          LAG(created_at) OVER (PARTITION BY integration_id, conversation_id, user_id ORDER BY created_at, seq) AS previous
        FROM messages
        WHERE integration_id IN (${integrations}) AND is_bot = 0 AND created_at >= ${from - q.sessionGapMs} AND created_at < ${to}
      ) s
      WHERE created_at >= ${from} AND (previous IS NULL OR created_at - previous > ${q.sessionGapMs})
      GROUP BY d`)
    const runtimeEvents = await keyed(sql`
      SELECT created_at / ${D} AS day, type AS key, COUNT(*) AS count FROM runtime_events
      WHERE bot_id = ${q.botId} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY created_at / ${D}, type`)
    const chatEvents = await keyed(sql`
      SELECT created_at / ${D} AS day, 'custom' AS key, COUNT(*) AS count FROM events
      WHERE integration_id IN (${integrations}) AND created_at >= ${from} AND created_at < ${to}
      GROUP BY created_at / ${D}`)
    const custom = ((await sql`
      SELECT day, name AS key, count FROM runtime_analytics WHERE bot_id = ${q.botId} AND day >= ${isoDay(q.fromDay)} AND day < ${isoDay(q.toDay)}`
      .execute(this.db)).rows as { day: string; key: string; count: unknown }[])
      .map((r) => ({ day: Math.round(Date.parse(`${r.day}T00:00:00Z`) / DAY_MS), key: r.key, count: Number(r.count) }))
    return {
      userMessages: messages.filter((m) => m.key === '0').map(({ day, count }) => ({ day, count })),
      botMessages: messages.filter((m) => m.key !== '0').map(({ day, count }) => ({ day, count })),
      newUsers, returningUsers, sessions,
      events: [...runtimeEvents, ...chatEvents],
      custom,
    }
  }

  /**
   * Each series reads one index range: handoffs_bot_requested, bot_turn_failures_bot_created,
   * knowledge_searches_bot_created, and message_tags_key_value joined to the rated messages.
   */
  async botQuality(q: Omit<BotActivityQuery, 'sessionGapMs'>): Promise<BotQuality> {
    const from = q.fromDay * DAY_MS
    const to = q.toDay * DAY_MS
    type Row = Record<string, unknown>
    const rows = async (query: ReturnType<typeof sql>) => (await query.execute(this.db)).rows as Row[]
    const n = (v: unknown) => Number(v ?? 0)
    const handoffs = (await rows(sql`
      SELECT requested_at / ${D} AS day, COUNT(*) AS requested, COUNT(claimed_at) AS claimed,
        AVG(claimed_at - requested_at) AS wait_mean, MAX(claimed_at - requested_at) AS wait_max
      FROM handoffs WHERE bot_id = ${q.botId} AND requested_at >= ${from} AND requested_at < ${to}
      GROUP BY requested_at / ${D}`))
      .map((r) => ({ day: n(r.day), requested: n(r.requested), claimed: n(r.claimed), waitMeanMs: n(r.wait_mean), waitMaxMs: n(r.wait_max) }))
    const turnFailures = (await rows(sql`
      SELECT created_at / ${D} AS day, reason AS key, COUNT(*) AS count FROM bot_turn_failures
      WHERE bot_id = ${q.botId} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY created_at / ${D}, reason`))
      .map((r) => ({ day: n(r.day), key: String(r.key), count: n(r.count) }))
    const knowledge = (await rows(sql`
      SELECT created_at / ${D} AS day, COUNT(*) AS searches, SUM(no_answer) AS no_answer FROM knowledge_searches
      WHERE bot_id = ${q.botId} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY created_at / ${D}`))
      .map((r) => ({ day: n(r.day), searches: n(r.searches), noAnswer: n(r.no_answer) }))
    const feedback = (await rows(sql`
      SELECT m.created_at / ${D} AS day, t.value AS key, COUNT(*) AS count
      FROM message_tags t JOIN messages m ON m.id = t.message_id
      WHERE t.integration_id IN (SELECT id FROM integrations WHERE bot_id = ${q.botId}) AND t.key = 'feedback' AND t.value IN ('positive', 'negative')
        AND m.is_bot = 1 AND m.created_at >= ${from} AND m.created_at < ${to}
      GROUP BY m.created_at / ${D}, t.value`))
      .map((r) => ({ day: n(r.day), key: String(r.key), count: n(r.count) }))
    return { handoffs, turnFailures, knowledge, feedback }
  }
}
