import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { BotParams } from './common.js'

const Wait = Type.Object({ mean: Type.Number(), max: Type.Number(), median: Type.Number() })

export default function getBotHandoffStats(app: App): void {
  app.get('/bots/:id/handoffs/stats', {
    config: { permission: 'handoffs.read' },
    schema: adminSchema('getBotHandoffStats',
      'Handoffs per UTC day of their request from startDate to endDate (both included, at most 366 days): requested, claimed and ended, and the wait (request → claim, seconds) of the claimed ones',
      {
        params: BotParams,
        querystring: Type.Object({ startDate: Type.String({ maxLength: 64 }), endDate: Type.String({ maxLength: 64 }) }),
      },
      {
        200: Type.Object({
          records: Type.Array(Type.Object({
            startDateTimeUtc: Type.String(), endDateTimeUtc: Type.String(),
            requested: Type.Integer(), claimed: Type.Integer(), ended: Type.Integer(), waitSeconds: Wait,
          })),
        }),
      }),
  }, async (request) => ({
    records: await app.services.handoffs.stats(request.workspace.id, request.params.id, request.query.startDate, request.query.endDate),
  }))
}
