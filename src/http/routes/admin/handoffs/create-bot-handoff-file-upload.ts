import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { caller, ConversationParams } from './common.js'

const Body = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  contentType: Type.String({ minLength: 3, maxLength: 200 }),
  size: Type.Integer({ minimum: 0, maximum: 1_073_741_824 }),
}, { additionalProperties: false })

export default function createBotHandoffFileUpload(app: App): void {
  app.post('/bots/:id/handoffs/:conversationId/files', {
    config: { permission: 'handoffs.write' },
    schema: adminSchema('createBotHandoffFileUpload',
      'An attachment for the agent\'s reply: a signed upload URL (PUT the content there) and the file\'s stable `url` for an image or file reply. Needs the caller\'s claim like a reply (taken if the handoff waits; 409 if another member holds it)',
      { params: ConversationParams, body: Body },
      { 200: Type.Object({ file: Type.Object({ id: Type.String(), uploadUrl: Type.String(), url: Type.String(), contentType: Type.String(), size: Type.Integer() }) }) }),
  }, async (request) => {
    const upload = await app.services.handoffs.createUpload(request.workspace.id, request.params.id, request.params.conversationId, caller(request), request.body)
    return { file: { id: upload.fileId, uploadUrl: upload.uploadUrl, url: upload.url, contentType: upload.contentType, size: upload.size } }
  })
}
