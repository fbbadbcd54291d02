import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'

export default function getBotQualityAnalytics(app: App): void {
  app.get('/bots/:id/analytics/quality', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getBotQualityAnalytics',
      'How well the bot served, per UTC day from startDate to endDate (both included, at most 366 days): handoffs requested that day and how many were claimed, with the claimed ones\' wait (request → claim, seconds: mean and longest); conversation turns whose bot code failed or was stopped at its time budget; knowledge searches of bot code and those where no passage reached the relevance threshold; thumbs up and down on the bot\'s messages of that day. Parley\'s operation (no @botpress/client method); the console\'s dashboard reads it',
      {
        params: Type.Object({ id: Type.String({ maxLength: 200 }) }),
        querystring: Type.Object({ startDate: Type.String({ maxLength: 64 }), endDate: Type.String({ maxLength: 64 }) }),
      },
      {
        200: Type.Object({
          records: Type.Array(Type.Object({
            startDateTimeUtc: Type.String(), endDateTimeUtc: Type.String(),
            handoffsRequested: Type.Integer(), handoffsClaimed: Type.Integer(),
            handoffWaitMeanSeconds: Type.Number(), handoffWaitMaxSeconds: Type.Number(),
            failedTurns: Type.Integer(), timedOutTurns: Type.Integer(),
            knowledgeSearches: Type.Integer(), knowledgeNoAnswer: Type.Integer(),
            positiveFeedback: Type.Integer(), negativeFeedback: Type.Integer(),
          })),
        }),
      }),
  }, async (request) => ({
    records: await app.services.analytics.botQuality(request.workspace.id, request.params.id, request.query.startDate, request.query.endDate),
  }))
}
