import { Type } from 'typebox'
import type { BotRow } from '../../../store/store.js'
import { FILES_PAGE_SIZE, MAX_KEY_LENGTH } from '../../../domain/file-service.js'
import { TAG_CURSOR_MAX } from '../../../store/file-store.js'
import { IsoDate, JsonObjectSchema, StringMap } from '../../schemas/common.js'
import { routeSchema } from '../route-schema.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The x-bot-id bot the caller was authorized for (authenticated Files API scope). */
    filesBot: BotRow
  }
}

/** Route schema of the Files API (security: Bearer token and x-bot-id, except the signed-URL routes). */
export function filesSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(
  operationId: string,
  summary: string,
  schema: S,
  responses: R,
  { authenticated = true } = {},
) {
  return routeSchema('files', authenticated ? [{ bearer: [], botId: [] }] : [], operationId, summary, schema, responses)
}

export const AccessPolicySchema = Type.Union([Type.Literal('integrations'), Type.Literal('public_content')])

export const FileKey = Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, description: 'Unique per bot; an opaque string, never a path' })

/** `{id}` path segment: a file id or a file key (URL-encoded). */
export const FileIdParams = Type.Object({ id: Type.String({ minLength: 1, description: 'File id or file key' }) })

/** Query of listFileTags and listFileTagValues (a tag value's nextToken is longer than other lists'). */
export const TagPageQuery = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: TAG_CURSOR_MAX, description: 'Token from the previous page\'s meta.nextToken' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: FILES_PAGE_SIZE.max, default: FILES_PAGE_SIZE.default })),
})

export const FileSchema = Type.Object(
  {
    id: Type.String(),
    botId: Type.String(),
    key: Type.String(),
    url: Type.String({ description: 'Download URL: stable for public_content files, otherwise signed and expiring' }),
    size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes; null until the upload completes' }),
    contentType: Type.String(),
    tags: StringMap(Type.String()),
    metadata: JsonObjectSchema,
    createdAt: IsoDate,
    updatedAt: IsoDate,
    accessPolicies: Type.Array(AccessPolicySchema),
    index: Type.Boolean(),
    status: Type.Union([
      Type.Literal('upload_pending'), Type.Literal('upload_failed'), Type.Literal('upload_completed'),
      Type.Literal('indexing_pending'), Type.Literal('indexing_failed'), Type.Literal('indexing_completed'),
    ]),
    failedStatusReason: Type.Optional(Type.String()),
    expiresAt: Type.Optional(IsoDate),
    owner: Type.Object({
      type: Type.Union([Type.Literal('bot'), Type.Literal('user'), Type.Literal('integration')]),
      id: Type.Optional(Type.String()),
    }),
    indexingProgress: Type.Optional(Type.Object({ passagesIndexed: Type.Integer(), passagesTotal: Type.Integer() }, {
      description: 'Parley extension, while status is indexing_pending on the instance doing the indexing',
    })),
  },
  { additionalProperties: false },
)

export const UploadableFileSchema = Type.Object(
  { ...FileSchema.properties, uploadUrl: Type.String({ description: 'Absolute signed URL: PUT the raw bytes there, no auth headers' }) },
  { additionalProperties: false },
)
