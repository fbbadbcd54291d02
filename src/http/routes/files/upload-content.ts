import { Type } from 'typebox'
import type { App } from '../../types.js'
import { filesSchema } from './common.js'

const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 1024, description: 'The signed token of an uploadUrl' }) })

const Uploaded = Type.Object({
  file: Type.Object({
    id: Type.String(),
    key: Type.String(),
    size: Type.Integer(),
    contentType: Type.String(),
    status: Type.String(),
  }),
})

/**
 * PUT {uploadUrl}: the raw bytes of a file, as `client.uploadFile` sends them (any Content-Type,
 * no auth headers: the signed URL is the credential). Registered in a scope whose only body
 * "parser" leaves the request stream untouched, so the content streams into the blob store and
 * the size limit is enforced while streaming.
 */
export default function uploadContent(app: App): void {
  app.put('/uploads/:token', {
    schema: filesSchema('uploadFileContent', 'Upload the content of a file to the uploadUrl returned by upsertFile: at most the declared size (413), once (410 ResourceGone after an upload landed)', { params: Params },
      { 200: Uploaded }, { authenticated: false }),
  }, async (request) => {
    const header = request.headers['content-length']
    const contentLength = header === undefined || !/^\d+$/.test(header) ? undefined : Number(header)
    // destroyOnReturn: false keeps the socket alive when we stop reading early (413), so the
    // error response can still be written; the rest of the body is then drained or cut by plugins/connection.ts.
    const body = request.raw.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>
    const file = await app.services.files.receiveUpload(request.params.token, contentLength, body)
    return { file: { id: file.id, key: file.key, size: file.size ?? 0, contentType: file.contentType, status: file.status } }
  })
}
