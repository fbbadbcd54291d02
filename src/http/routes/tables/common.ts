import { Type } from 'typebox'
export { jobView, rowView, tableView, type RowView } from '../../../domain/table-views.js'
import { IsoDate, StringMap } from '../../schemas/common.js'
import { routeSchema } from '../route-schema.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The x-bot-id bot the caller acts as (authenticated Tables API scope). */
    tablesBot: import('../../../store/store.js').BotRow
  }
}

/** Route schema of the Tables API (security: Bearer token and x-bot-id). */
export function tablesSchema<S extends Record<string, unknown>, R extends Record<number, unknown>>(operationId: string, summary: string, schema: S, responses: R) {
  return routeSchema('tables', [{ bearer: [], botId: [] }], operationId, summary, schema, responses)
}

export const TableParams = Type.Object({ table: Type.String({ minLength: 1, maxLength: 200, description: 'Table id or name' }) })
export const Tags = StringMap(Type.String({ maxLength: 1000 }), { minKeyLength: 1, maxKeyLength: 200 })
export const AnyObject = Type.Object({}, { additionalProperties: true })

export const TableOut = Type.Object({
  id: Type.String(), name: Type.String(), factor: Type.Integer(), frozen: Type.Boolean(),
  keyColumn: Type.Union([Type.String(), Type.Null()]), schema: AnyObject, tags: StringMap(Type.String()),
  isComputeEnabled: Type.Boolean(), createdAt: IsoDate, updatedAt: IsoDate,
}, { additionalProperties: false })

export const RowOut = Type.Object({ id: Type.Integer(), createdAt: IsoDate, updatedAt: IsoDate, computed: AnyObject, similarity: Type.Optional(Type.Number()) }, { additionalProperties: true })

export const JobOut = Type.Object({
  id: Type.String(), botId: Type.String(), tableId: Type.String(),
  type: Type.Union([Type.Literal('export'), Type.Literal('import'), Type.Literal('delete_rows')]),
  status: Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('finalizing'), Type.Literal('completed'), Type.Literal('failed')]),
  progress: Type.Number(), inputFileId: Type.Union([Type.String(), Type.Null()]), outputFileId: Type.Union([Type.String(), Type.Null()]),
  error: Type.Optional(Type.String()), createdAt: IsoDate, updatedAt: IsoDate,
}, { additionalProperties: false })

export const TableFields = {
  factor: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, description: 'Row size limit: 4 KB × factor' })),
  frozen: Type.Optional(Type.Boolean()),
  keyColumn: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'A string or number column: unique, indexed, used by upsert' })),
  tags: Type.Optional(Tags),
  isComputeEnabled: Type.Optional(Type.Boolean()),
}

export const RowsIn = Type.Array(AnyObject, { maxItems: 1000 })
