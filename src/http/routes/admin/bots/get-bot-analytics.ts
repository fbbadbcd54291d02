import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { StringMap } from '../../../schemas/common.js'

const Counts = StringMap(Type.Number())
const Stats = Type.Object({ mean: Type.Number(), sd: Type.Number(), min: Type.Number(), max: Type.Number() })

export default function getBotAnalytics(app: App): void {
  app.get('/bots/:id/analytics', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getBotAnalytics',
      'The bot\'s activity per UTC day from startDate to endDate (both included, at most 366 days): new and returning users, sessions (a user\'s messages in a conversation with no gap over 30 minutes), user and bot messages, events by type, trackAnalytics counters, and the calls through the LLM gateway (latency in ms and output tokens per second over the calls without error; cost in US dollars)',
      {
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ startDate: Type.String({ maxLength: 64 }), endDate: Type.String({ maxLength: 64 }) }),
      },
      {
        200: Type.Object({
          records: Type.Array(Type.Object({
            startDateTimeUtc: Type.String(), endDateTimeUtc: Type.String(),
            returningUsers: Type.Integer(), newUsers: Type.Integer(), sessions: Type.Integer(),
            messages: Type.Integer(), userMessages: Type.Integer(), botMessages: Type.Integer(),
            events: Type.Integer(), eventTypes: Counts, customEvents: Counts,
            llm: Type.Object({
              calls: Type.Integer(), errors: Type.Integer(), inputTokens: Type.Integer(), outputTokens: Type.Integer(),
              latency: Stats, tokensPerSecond: Stats, cost: Type.Object({ sum: Type.Number(), mean: Type.Number(), sd: Type.Number(), min: Type.Number(), max: Type.Number() }),
            }),
          })),
        }),
      }),
  }, async (request) => ({
    records: await app.services.analytics.botAnalytics(request.workspace.id, request.params.id, request.query.startDate, request.query.endDate),
  }))
}
