import { Type } from 'typebox'
import { runtimeOperation } from '../../../operations/operation.js'
import { IdParams, RuntimeConversationSchema, StringMapPatch, TagsPatch } from '../common.js'

export default runtimeOperation({
  id: 'updateConversation', api: 'runtime', method: 'PUT', path: '/conversations/:id', permission: 'runtime.write', installation: { params: { id: 'conversation' } },
  summary: 'Merge tags and properties into a conversation (null removes a key)',
  params: IdParams,
  body: Type.Object({
    currentTaskId: Type.Optional(Type.String({ description: 'Deprecated and ignored' })),
    tags: Type.Optional(TagsPatch),
    properties: Type.Optional(StringMapPatch),
  }, { additionalProperties: false }),
  response: Type.Object({ conversation: RuntimeConversationSchema }),
  run: async ({ bot, botChat, views }, { params, body }) => ({ conversation: views.conversation(await botChat.updateConversation(bot, params.id, body)) }),
})
