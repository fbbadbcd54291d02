import type { App } from '../../types.js'
import { EmptyBody, EmptyObject } from '../../schemas/common.js'
import { FileIdParams, filesSchema } from './common.js'

export default function deleteFile(app: App): void {
  app.delete('/:id', {
    config: { permission: 'files.write' },
    schema: filesSchema('deleteFile', 'Delete a file (by id or key) and its content', { params: FileIdParams, body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.files.deleteFile(request.filesBot.id, request.params.id)
    return {}
  })
}
