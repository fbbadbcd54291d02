import { Type } from 'typebox'
import type { App } from '../../types.js'
import { fileView } from '../../../domain/file-views.js'
import { FileIdParams, FileSchema, filesSchema } from './common.js'

export default function getFile(app: App): void {
  app.get('/:id', {
    config: { permission: 'files.read' },
    schema: filesSchema('getFile', 'Get a file by id or key', { params: FileIdParams }, { 200: Type.Object({ file: FileSchema }) }),
  }, async (request) => ({ file: fileView(await app.services.files.getFile(request.filesBot.id, request.params.id)) }))
}
