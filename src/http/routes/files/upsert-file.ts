import { Type } from 'typebox'
import type { App } from '../../types.js'
import { uploadableFileView } from '../../../domain/file-views.js'
import { IsoDate, JsonObjectSchema, StringMap } from '../../schemas/common.js'
import { AccessPolicySchema, FileKey, UploadableFileSchema, filesSchema } from './common.js'

const Body = Type.Object(
  {
    key: FileKey,
    size: Type.Integer({ minimum: 0, description: 'Bytes that will be uploaded: at most the server\'s maxFileBytes (else 413); the upload may not exceed it (413); reserved against the bot\'s storage quota (else 403 QuotaExceeded)' }),
    tags: Type.Optional(StringMap(Type.String())),
    index: Type.Optional(Type.Boolean({ description: 'Stored and returned; Parley does not index files' })),
    indexing: Type.Optional(JsonObjectSchema),
    accessPolicies: Type.Optional(Type.Array(AccessPolicySchema, { maxItems: 10 })),
    contentType: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Default: inferred from the key\'s extension, else application/octet-stream' })),
    expiresAt: Type.Optional(IsoDate),
    publicContentImmediatelyAccessible: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(JsonObjectSchema),
  },
  { additionalProperties: false },
)

export default function upsertFile(app: App): void {
  app.put('', {
    config: { permission: 'files.write' },
    schema: filesSchema('upsertFile', 'Create a file, or reset the file with this key for a new upload; returns a signed upload URL',
      { body: Body }, { 200: Type.Object({ file: UploadableFileSchema }) }),
  }, async (request) => ({
    file: uploadableFileView(await app.services.files.upsertFile(request.filesBot.id, request.principal, request.body)),
  }))
}
