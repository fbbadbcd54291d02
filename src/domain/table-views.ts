import type { JsonObject } from '../store/store.js'
import type { TableJobRow, TableRecord, TableRow } from '../store/table-store.js'

/** Tables API objects as @botpress/client returns them (the routes and the sandboxed bot's client). */

const iso = (ms: number) => new Date(ms).toISOString()

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

