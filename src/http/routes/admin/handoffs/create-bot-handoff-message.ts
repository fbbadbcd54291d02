import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { messageView } from '../../../../domain/chat-views.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { MessageSchema } from '../../../schemas/chat.js'
import type { JsonObject } from '../../../../store/store.js'
import { caller, ConversationParams, HandoffNoteSchema } from './common.js'

const Reply = Type.Object({ type: Type.String({ minLength: 1, maxLength: 50 }), payload: JsonObjectSchema }, { additionalProperties: false })
const Note = Type.Object({ note: Type.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false })

export default function createBotHandoffMessage(app: App): void {
  app.post('/bots/:id/handoffs/:conversationId/messages', {
    config: { permission: 'handoffs.write' },
    schema: adminSchema('createBotHandoffMessage',
      'An agent\'s reply in the handed-off conversation ({ type, payload }: a Chat API payload; the caller claims the handoff if it waits, 409 if another member holds it), or an internal note ({ note }) the user never sees',
      { params: ConversationParams, body: Type.Union([Reply, Note]) },
      { 200: Type.Object({ message: Type.Optional(MessageSchema), note: Type.Optional(HandoffNoteSchema) }) }),
  }, async (request) => {
    const body = request.body
    const input = 'note' in body ? { note: body.note } : { payload: { ...(body.payload as JsonObject), type: body.type } }
    const result = await app.services.handoffs.send(request.workspace.id, request.params.id, request.params.conversationId, caller(request), input)
    if ('message' in result) return { message: messageView(result.message) }
    return { note: { memberId: result.note.memberId, text: result.note.text, createdAt: new Date(result.note.createdAt).toISOString() } }
  })
}
