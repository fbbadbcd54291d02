import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { runtimeConversationView } from '../../../../domain/runtime-views.js'
import { IdParams, RuntimeConversationSchema, runtimeSchema, StringMapPatch, TagsPatch } from '../common.js'

const Body = Type.Object({
  currentTaskId: Type.Optional(Type.String({ description: 'Deprecated and ignored' })),
  tags: Type.Optional(TagsPatch),
  properties: Type.Optional(StringMapPatch),
}, { additionalProperties: false })

export default function updateConversation(app: App): void {
  app.put('/conversations/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'conversation' } } },
    schema: runtimeSchema('updateConversation', 'Merge tags and properties into a conversation (null removes a key)', { params: IdParams, body: Body },
      { 200: Type.Object({ conversation: RuntimeConversationSchema }) }),
  }, async (request) => ({
    conversation: runtimeConversationView(await app.services.botChat.updateConversation(request.runtimeBot, request.params.id, request.body)),
  }))
}
