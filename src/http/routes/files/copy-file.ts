import { Type } from 'typebox'
import type { App } from '../../types.js'
import { fileView } from '../../../domain/file-views.js'
import { FileKey, FileSchema, filesSchema } from './common.js'

const Params = Type.Object({
  idOrKey: Type.String({ minLength: 1, description: 'Source file id or key' }),
  destinationKey: FileKey,
})

const Headers = Type.Object({
  'x-destination-bot-id': Type.Optional(Type.String({
    minLength: 1, maxLength: 200, description: 'Copy to this bot of the same workspace (default: the x-bot-id bot); the caller needs files.write there too',
  })),
})

const Body = Type.Object(
  { overwrite: Type.Optional(Type.Boolean({ description: 'Replace the file holding destinationKey (otherwise 409 AlreadyExists)' })) },
  { additionalProperties: false },
)

export default function copyFile(app: App): void {
  app.post('/:idOrKey/:destinationKey', {
    config: { permission: 'files.write' },
    schema: filesSchema('copyFile', 'Copy a file with its content, tags, metadata and passages to another key, in this bot or another bot of the workspace',
      { params: Params, headers: Headers, body: Body }, { 200: Type.Object({ file: FileSchema }) }),
  }, async (request) => {
    const { auth, files } = app.services
    const to = await auth.sameWorkspaceBot(request.principal, request.filesBot, request.headers['x-destination-bot-id'], 'files.write')
    const file = await files.copyFile(request.principal, request.filesBot.id, request.params.idOrKey, {
      botId: to.id, key: request.params.destinationKey, overwrite: request.body.overwrite,
    })
    return { file: fileView(file) }
  })
}
