import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { ListMeta, listMeta } from '../../../schemas/common.js'
import { BotParams, HandoffSchema } from './common.js'

export default function listBotHandoffs(app: App): void {
  app.get('/bots/:id/handoffs', {
    config: { permission: 'handoffs.read' },
    schema: adminSchema('listBotHandoffs', 'The bot\'s human handoffs, oldest request first (an inbox: who waits longest first), optionally of one status; 50 a page',
      {
        params: BotParams,
        querystring: Type.Object({
          status: Type.Optional(Type.Union([Type.Literal('waiting'), Type.Literal('active'), Type.Literal('ended')])),
          nextToken: Type.Optional(Type.String({ maxLength: 512 })),
        }),
      },
      { 200: Type.Object({ handoffs: Type.Array(HandoffSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.handoffs.list(request.workspace.id, request.params.id, request.query.status, request.query.nextToken)
    return { handoffs: page.handoffs, meta: listMeta(page) }
  })
}
