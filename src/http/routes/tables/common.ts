import { Type } from 'typebox'
import type { TableJobRow, TableRecord, TableRow } from '../../../store/table-store.js'
import type { JsonObject } from '../../../store/store.js'
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

const iso = (ms: number) => new Date(ms).toISOString()

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

/** The table as Botpress returns it. */
export function tableView(t: TableRow) {
  const d = t.definition
  return {
    id: t.id, name: t.name, factor: d.factor, frozen: d.frozen, keyColumn: d.keyColumn, schema: d.schema, tags: d.tags,
    isComputeEnabled: d.isComputeEnabled, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt),
  }
}

/** A row: its columns (those of the schema, or the selected ones) and the built-in fields. */
export type RowView = { id: number; createdAt: string; updatedAt: string; computed: Record<string, never>; similarity?: number } & JsonObject

export function rowView(r: TableRecord, columns: string[], select?: string[]): RowView {
  const out = { id: r.id } as RowView
  const wanted = select && select.length > 0 ? select : undefined
  for (const c of wanted ?? columns) if (r.data[c] !== undefined) out[c] = r.data[c]!
  out.createdAt = iso(r.createdAt)
  out.updatedAt = iso(r.updatedAt)
  out.computed = {}
  if (r.similarity !== undefined) out.similarity = r.similarity
  return out
}

export function jobView(j: TableJobRow) {
  return {
    id: j.id, botId: j.botId, tableId: j.tableId, type: j.type, status: j.status, progress: j.progress,
    inputFileId: j.inputFileId, outputFileId: j.outputFileId, ...(j.error !== null ? { error: j.error } : {}),
    createdAt: iso(j.createdAt), updatedAt: iso(j.updatedAt),
  }
}

export const TableFields = {
  factor: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, description: 'Row size limit: 4 KB × factor' })),
  frozen: Type.Optional(Type.Boolean()),
  keyColumn: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'A string or number column: unique, indexed, used by upsert' })),
  tags: Type.Optional(Tags),
  isComputeEnabled: Type.Optional(Type.Boolean()),
}

export const RowsIn = Type.Array(AnyObject, { maxItems: 1000 })
