import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { IsoDate } from '../../../schemas/common.js'
import { adminSchema } from '../common.js'
import { errors } from '../../../../lib/errors.js'

/**
 * Milliseconds of a date-time query value. The format admits what no Date holds (a leap second,
 * `23:59:60`): that is the caller's error, not a NaN for the store (PostgreSQL refuses it as a bigint).
 */
function timeOf(name: string, value: string | undefined): number | undefined {
  if (!value) return undefined
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) throw errors.invalidQuery(`${name} must be an ISO 8601 date-time that a date can hold (no leap seconds)`)
  return ms
}

const Query = Type.Object({
  timeStart: Type.Optional(IsoDate),
  timeEnd: Type.Optional(IsoDate),
  level: Type.Optional(Type.String({ maxLength: 32 })),
  conversationId: Type.Optional(Type.String({ maxLength: 200 })),
  nextToken: Type.Optional(Type.String()),
})

const LogSchema = Type.Object({ timestamp: IsoDate, level: Type.String(), message: Type.String(), conversationId: Type.Optional(Type.String()) })

export default function getBotLogs(app: App): void {
  app.get('/bots/:id/logs', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getBotLogs', 'What the bot\'s code wrote with console.* and the runtime\'s failure records, oldest first',
      { params: Type.Object({ id: Type.String() }), querystring: Query },
      { 200: Type.Object({ logs: Type.Array(LogSchema), nextToken: Type.Optional(Type.String()) }) }),
  }, async (request) => {
    const q = request.query
    for (const [name, v] of [['level', q.level], ['conversationId', q.conversationId]] as const) {
      if (v !== undefined && (v.includes('\u0000') || !v.isWellFormed())) throw errors.invalidQuery(`${name} must be text without NUL characters`)
    }
    const range = { from: timeOf('timeStart', q.timeStart), to: timeOf('timeEnd', q.timeEnd), level: q.level || undefined, conversationId: q.conversationId || undefined }
    const page = await app.services.bots.getLogs(request.workspace.id, request.params.id, range, q.nextToken)
    return {
      logs: page.items.map((l) => ({
        timestamp: new Date(l.at).toISOString(), level: l.level, message: l.message, ...(l.conversationId !== null && { conversationId: l.conversationId }),
      })),
      ...(page.next && { nextToken: page.next }),
    }
  })
}
