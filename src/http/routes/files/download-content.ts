import { Type } from 'typebox'
import type { App } from '../../types.js'
import { serveUntrusted } from '../../untrusted-content.js'
import { filesSchema } from './common.js'

const Params = Type.Object({ botId: Type.String({ maxLength: 200 }), fileId: Type.String({ maxLength: 200 }) })
const Query = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20, description: 'Expiry of a signed URL (Unix seconds)' })),
  signature: Type.Optional(Type.String({ maxLength: 200, description: 'HMAC-SHA256 signature of a signed URL' })),
})

/**
 * GET {file.url}: the content of a file. public_content files have a stable unsigned URL; other
 * files a signed, expiring one. The bytes are the uploader's: served inert (src/http/untrusted-content.ts), the file
 * name from the key.
 */
export default function downloadContent(app: App): void {
  app.get('/content/:botId/:fileId', {
    schema: filesSchema('getFileContent', 'Download the content of a file from its url', { params: Params, querystring: Query },
      { 200: Type.Unknown({ description: 'The file\'s bytes, with its Content-Type' }) }, { authenticated: false }),
  }, async (request, reply) => {
    const { file, stream, size } = await app.services.files.openContent(request.params.botId, request.params.fileId, request.query)
    const isPublic = file.accessPolicies.includes('public_content')
    return serveUntrusted(reply, { contentType: file.contentType, fileName: file.key, embeddable: true })
      .header('content-length', size)
      .header('cache-control', isPublic ? 'public, max-age=60' : 'private, max-age=60')
      .send(stream)
  })
}
