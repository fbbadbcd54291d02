import { Type } from 'typebox'
import type { App } from '../../types.js'
import { fileView } from '../../../domain/file-views.js'
import { IsoDate, StringMap } from '../../schemas/common.js'
import { AccessPolicySchema, FileIdParams, FileSchema, filesSchema } from './common.js'

const Body = Type.Object(
  {
    metadata: Type.Optional(StringMap(Type.Unknown(), { description: 'Merged into the metadata; null removes a key' })),
    tags: Type.Optional(StringMap(Type.Union([Type.String(), Type.Null()]), { description: 'Merged into the tags; null removes a tag' })),
    accessPolicies: Type.Optional(Type.Array(AccessPolicySchema, { maxItems: 10 })),
    expiresAt: Type.Optional(Type.Union([IsoDate, Type.Null()], { description: 'null removes the expiry' })),
  },
  { additionalProperties: false },
)

export default function updateFileMetadata(app: App): void {
  app.put('/:id', {
    config: { permission: 'files.write' },
    schema: filesSchema('updateFileMetadata', 'Update a file\'s metadata, tags, access policies or expiry (by id or key)',
      { params: FileIdParams, body: Body }, { 200: Type.Object({ file: FileSchema }) }),
  }, async (request) => ({
    file: fileView(await app.services.files.updateFileMetadata(request.filesBot.id, request.params.id, request.body)),
  }))
}

