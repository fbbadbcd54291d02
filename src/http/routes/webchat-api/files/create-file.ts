import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { StringMap } from '../../../schemas/common.js'
import { webchatParams, webchatSchema } from '../common.js'

const Body = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 300 }),
  size: Type.Integer({ minimum: 0, maximum: 1_073_741_824 }),
  contentType: Type.Optional(Type.String({ minLength: 3, maxLength: 200 })),
  // What the webchat sends with every upload; the server's own policy applies (public, not indexed, the bot's limits).
  accessPolicies: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: 10 })),
  index: Type.Optional(Type.Boolean()),
  tags: Type.Optional(StringMap(Type.String({ maxLength: 1000 }))),
  expiresAt: Type.Optional(Type.String({ maxLength: 50 })),
}, { additionalProperties: false })

const File = Type.Object({
  id: Type.String(), botId: Type.String(), key: Type.String(), size: Type.Integer(), contentType: Type.String(),
  tags: StringMap(Type.String()), createdAt: Type.String(), updatedAt: Type.String(),
  accessPolicies: Type.Array(Type.String()), index: Type.Boolean(), url: Type.String(), status: Type.String(), uploadUrl: Type.String(),
}, { additionalProperties: false })

export default function createFile(app: App): void {
  app.post('/files', {
    schema: webchatSchema('createFile',
      'A signed upload URL for a file the user will send (its type from contentType or the key\'s extension; the bot\'s webchat settings uploadTypes/uploadMaxBytes apply): PUT the content there, then send an image, audio, video or file message with its url',
      { params: webchatParams(), body: Body }, { 201: Type.Object({ file: File }) }),
  }, async (request, reply) => {
    const { upload, contentType } = await app.services.webchatApi.createFile(request.chatUser, request.body)
    const now = new Date().toISOString()
    return reply.code(201).send({
      file: {
        id: upload.fileId, botId: request.integration.botId, key: request.body.key, size: upload.size, contentType, tags: request.body.tags ?? {},
        createdAt: now, updatedAt: now, accessPolicies: ['public_content'], index: false, url: upload.url, status: 'upload_pending', uploadUrl: upload.uploadUrl,
      },
    })
  })
}
