import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { chatParams, chatSchema } from '../common.js'

/** Parley's addition to the Chat API (no @botpress/chat method): a webchat user's file, through the Files API. */
export default function createFileUpload(app: App): void {
  app.post('/files', {
    schema: chatSchema('createFileUpload',
      'A signed upload URL for a file the caller will send (allowed by the bot\'s webchat settings uploadTypes/uploadMaxBytes); PUT the content there, then send an image or file message with `url`. Quotas: files and bytes per user per window (429 RateLimited), bytes per bot (403 QuotaExceeded)',
      {
        params: chatParams(),
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          contentType: Type.String({ minLength: 3, maxLength: 200 }),
          size: Type.Integer({ minimum: 0, maximum: 1_073_741_824 }),
        }, { additionalProperties: false }),
      },
      { 200: Type.Object({ file: Type.Object({ id: Type.String(), uploadUrl: Type.String(), url: Type.String(), contentType: Type.String(), size: Type.Integer() }) }) }),
  }, async (request) => {
    const upload = await app.services.webchatUploads.createUpload(request.chatUser, request.body)
    return { file: { id: upload.fileId, uploadUrl: upload.uploadUrl, url: upload.url, contentType: upload.contentType, size: upload.size } }
  })
}
