import { Type } from 'typebox'
import type { App } from '../../types.js'
import { contentDisposition, filesSchema } from './common.js'

const Params = Type.Object({ botId: Type.String({ maxLength: 200 }), fileId: Type.String({ maxLength: 200 }) })
const Query = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20, description: 'Expiry of a signed URL (Unix seconds)' })),
  signature: Type.Optional(Type.String({ maxLength: 200, description: 'HMAC-SHA256 signature of a signed URL' })),
})

/**
 * GET {file.url}: the content of a file. public_content files have a stable unsigned URL; other
 * files a signed, expiring one. Uploaded HTML or SVG must never run on this origin, hence
 * nosniff and a sandboxing CSP; the file name comes from the key, RFC 6266-encoded.
 */
export default function downloadContent(app: App): void {
  app.get('/content/:botId/:fileId', {
    schema: filesSchema('getFileContent', 'Download the content of a file from its url', { params: Params, querystring: Query },
      { 200: Type.Unknown({ description: 'The file\'s bytes, with its Content-Type' }) }, { authenticated: false }),
  }, async (request, reply) => {
    const { file, stream, size } = await app.services.files.openContent(request.params.botId, request.params.fileId, request.query)
    const isPublic = file.accessPolicies.includes('public_content')
    return reply
      .header('content-type', file.contentType)
      .header('content-length', size)
      .header('content-disposition', contentDisposition(file.key))
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'")
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', isPublic ? 'public, max-age=60' : 'private, max-age=60')
      .send(stream)
  })
}
