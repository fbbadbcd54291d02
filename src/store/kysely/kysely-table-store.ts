import { sql, type Generated, type Kysely, type RawBuilder } from 'kysely'
import type { JsonObject } from '../store.js'
import { UniqueViolation } from '../store.js'
import {
  COLUMN_NAME, type FieldRef, type GroupSpec, type JobStatus, type JobType, type NewRecord, type RowCondition, type RowQuery,
  type TableDefinition, type TableJobRow, type TableRecord, type TableRow, type TableStore,
} from '../table-store.js'

type Dialect = 'sqlite' | 'postgres'

/** The tables of migrations/<dialect>/0009_tables.sql. */
interface TablesSchema {
  bot_tables: { id: string; bot_id: string; name: string; definition: string; created_at: number; updated_at: number }
  bot_table_rows: { id: Generated<number>; table_id: string; data: unknown; key_value: string | null; search_text: string | null; created_at: number; updated_at: number }
  bot_table_jobs: {
    id: string; bot_id: string; table_id: string; type: string; status: string; progress: number; params: string
    input_file_id: string | null; output_file_id: string | null; error: string | null; attempts: number
    lease_owner: string | null; lease_until: number; created_at: number; updated_at: number
  }
}

const isUniqueViolation = (err: unknown) => {
  const code = (err as { code?: unknown } | undefined)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}

/** Identifiers written into SQL text: checked here again, whatever the caller did. */
function segment(name: string): string {
  if (!COLUMN_NAME.test(name)) throw new Error(`Refusing identifier ${JSON.stringify(name)} in SQL`)
  return name
}

const toTable = (r: TablesSchema['bot_tables']): TableRow => ({
  id: r.id, botId: r.bot_id, name: r.name, definition: JSON.parse(r.definition) as TableDefinition,
  createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
})

const toJob = (r: TablesSchema['bot_table_jobs']): TableJobRow => ({
  id: r.id, botId: r.bot_id, tableId: r.table_id, type: r.type as JobType, status: r.status as JobStatus, progress: Number(r.progress),
  params: JSON.parse(r.params) as JsonObject, inputFileId: r.input_file_id, outputFileId: r.output_file_id, error: r.error,
  attempts: Number(r.attempts), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
})

/**
 * Both engines: the same statements, except the expressions that read a row's document, which
 * `Sql` (below) writes per engine (SQLite json_extract/json_type; PostgreSQL #>, #>> and jsonb_typeof).
 */
export class KyselyTableStore implements TableStore {
  private readonly db: Kysely<TablesSchema>
  private readonly x: DocumentSql

  constructor(db: Kysely<any>, private readonly dialect: Dialect) {
    this.db = db as Kysely<TablesSchema>
    this.x = dialect === 'sqlite' ? sqliteSql : postgresSql
  }

  private toRecord = (r: { id: number | string; data: unknown; created_at: number | string; updated_at: number | string; similarity?: unknown }): TableRecord => {
    const record: TableRecord = {
      id: Number(r.id),
      data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as JsonObject,
      createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
    }
    if (r.similarity !== undefined && r.similarity !== null) record.similarity = Number(r.similarity)
    return record
  }

  private dataParam(data: JsonObject): unknown {
    return JSON.stringify(data)
  }

  // ---- tables ----

  async createTable(row: TableRow): Promise<void> {
    try {
      await this.db.insertInto('bot_tables').values({
        id: row.id, bot_id: row.botId, name: row.name, definition: JSON.stringify(row.definition), created_at: row.createdAt, updated_at: row.updatedAt,
      }).execute()
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolation('Table')
      throw err
    }
  }

  async getTable(botId: string, idOrName: string): Promise<TableRow | undefined> {
    const r = await this.db.selectFrom('bot_tables').selectAll().where('bot_id', '=', botId)
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)])).orderBy('created_at').executeTakeFirst()
    return r && toTable(r)
  }

  async listTables(botId: string): Promise<TableRow[]> {
    const rows = await this.db.selectFrom('bot_tables').selectAll().where('bot_id', '=', botId).orderBy('created_at').orderBy('id').execute()
    return rows.map(toTable)
  }

  async updateTable(id: string, patch: { name?: string; definition?: TableDefinition; renameColumn?: { from: string; to: string } }, now: number): Promise<TableRow | undefined> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const r = await trx.updateTable('bot_tables').set({
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.definition !== undefined ? { definition: JSON.stringify(patch.definition) } : {}),
          updated_at: now,
        }).where('id', '=', id).returningAll().executeTakeFirst()
        if (!r) return undefined
        if (patch.renameColumn) {
          const { from, to } = patch.renameColumn
          await sql`UPDATE bot_table_rows SET data = ${this.x.renameKey(segment(from), segment(to))} WHERE table_id = ${id} AND ${this.x.json([from])} IS NOT NULL`.execute(trx)
        }
        return toTable(r)
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolation('Table')
      throw err
    }
  }

  async deleteTable(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('bot_tables').where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async duplicateTable(sourceId: string, row: TableRow, withRows: boolean): Promise<number> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('bot_tables').values({
          id: row.id, bot_id: row.botId, name: row.name, definition: JSON.stringify(row.definition), created_at: row.createdAt, updated_at: row.updatedAt,
        }).execute()
        if (!withRows) return 0
        const r = await sql`INSERT INTO bot_table_rows (table_id, data, key_value, search_text, created_at, updated_at)
          SELECT ${row.id}, data, key_value, search_text, created_at, ${row.createdAt} FROM bot_table_rows WHERE table_id = ${sourceId} ORDER BY id`.execute(trx)
        return Number(r.numAffectedRows ?? 0)
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolation('Table')
      throw err
    }
  }

  async countRows(tableId: string): Promise<number> {
    const r = await this.db.selectFrom('bot_table_rows').select((eb) => eb.fn.countAll<number>().as('n')).where('table_id', '=', tableId).executeTakeFirst()
    return Number(r?.n ?? 0)
  }

  // ---- rows ----

  async insertRows(tableId: string, rows: NewRecord[], now: number): Promise<(TableRecord | undefined)[]> {
    if (rows.length === 0) return []
    return this.db.transaction().execute(async (trx) => {
      const out: (TableRecord | undefined)[] = []
      // Rows with a key go one by one (a taken key skips that row only); the others in batches.
      const CHUNK = 200
      let batch: NewRecord[] = []
      const flush = async () => {
        if (batch.length === 0) return
        const inserted = await trx.insertInto('bot_table_rows')
          .values(batch.map((r) => ({ table_id: tableId, data: this.dataParam(r.data), key_value: null, search_text: r.searchText, created_at: now, updated_at: now })))
          .returning(['id', 'data', 'created_at', 'updated_at']).execute()
        // RETURNING order follows VALUES order for a single INSERT on both engines; sort by id to be sure.
        inserted.sort((a, b) => Number(a.id) - Number(b.id))
        for (const r of inserted) out.push(this.toRecord(r))
        batch = []
      }
      for (const row of rows) {
        if (row.keyValue === null) {
          batch.push(row)
          if (batch.length >= CHUNK) await flush()
          continue
        }
        await flush()
        const r = await trx.insertInto('bot_table_rows')
          .values({ table_id: tableId, data: this.dataParam(row.data), key_value: row.keyValue, search_text: row.searchText, created_at: now, updated_at: now })
          .onConflict((oc) => oc.columns(['table_id', 'key_value']).doNothing())
          .returning(['id', 'data', 'created_at', 'updated_at']).executeTakeFirst()
        out.push(r && this.toRecord(r))
      }
      await flush()
      return out
    })
  }

  async getRows(tableId: string, ids: number[]): Promise<TableRecord[]> {
    if (ids.length === 0) return []
    const rows = await this.db.selectFrom('bot_table_rows').select(['id', 'data', 'created_at', 'updated_at'])
      .where('table_id', '=', tableId).where('id', 'in', ids).execute()
    return rows.map(this.toRecord)
  }

  async getRowsByKey(tableId: string, keyValues: string[]): Promise<(TableRecord & { keyValue: string })[]> {
    if (keyValues.length === 0) return []
    const rows = await this.db.selectFrom('bot_table_rows').select(['id', 'data', 'created_at', 'updated_at', 'key_value'])
      .where('table_id', '=', tableId).where('key_value', 'in', keyValues).execute()
    return rows.map((r) => ({ ...this.toRecord(r), keyValue: r.key_value! }))
  }

  async replaceRows(tableId: string, rows: (NewRecord & { id: number })[], now: number): Promise<(TableRecord | undefined)[]> {
    // One statement per row, each committed alone: a key value taken by another row fails that row
    // only (PostgreSQL would abort a surrounding transaction on the violation).
    {
      const out: (TableRecord | undefined)[] = []
      for (const row of rows) {
        try {
          const r = await this.db.updateTable('bot_table_rows')
            .set({ data: this.dataParam(row.data), key_value: row.keyValue, search_text: row.searchText, updated_at: now })
            .where('table_id', '=', tableId).where('id', '=', row.id)
            .returning(['id', 'data', 'created_at', 'updated_at']).executeTakeFirst()
          out.push(r && this.toRecord(r))
        } catch (err) {
          if (isUniqueViolation(err)) { out.push(undefined); continue }
          throw err
        }
      }
      return out
    }
  }

  async deleteRowsById(tableId: string, ids: number[]): Promise<number> {
    if (ids.length === 0) return 0
    const r = await this.db.deleteFrom('bot_table_rows').where('table_id', '=', tableId).where('id', 'in', ids).executeTakeFirst()
    return Number(r.numDeletedRows)
  }

  async deleteRowsWhere(tableId: string, where: RowCondition, limit: number): Promise<number> {
    const r = await sql`DELETE FROM bot_table_rows WHERE id IN (
      SELECT id FROM bot_table_rows WHERE table_id = ${tableId} AND ${this.cond(where)} ORDER BY id LIMIT ${limit})`.execute(this.db)
    return Number(r.numAffectedRows ?? 0)
  }

  async findRows(tableId: string, q: RowQuery): Promise<{ rows: TableRecord[]; hasMore: boolean }> {
    const terms = q.search ?? []
    const similarity = terms.length > 0 ? this.x.similarity(terms) : undefined
    const order: RawBuilder<unknown>[] = []
    if (q.orderBy) order.push(sql`${this.orderExpr(q.orderBy.field)} ${sql.raw(q.orderBy.direction === 'asc' ? 'ASC NULLS FIRST' : 'DESC NULLS LAST')}`)
    else if (similarity) order.push(sql`similarity DESC`)
    order.push(sql`id ${sql.raw(q.orderBy?.direction === 'desc' && q.orderBy.field.kind === 'id' ? 'DESC' : 'ASC')}`)
    const where = similarity ? sql`${this.cond(q.where)} AND ${similarity} > 0` : this.cond(q.where)
    const { rows } = await sql<{ id: number; data: unknown; created_at: number; updated_at: number; similarity?: number }>`
      SELECT id, data, created_at, updated_at${similarity ? sql`, ${similarity} AS similarity` : sql``}
      FROM bot_table_rows WHERE table_id = ${tableId} AND ${where}
      ORDER BY ${sql.join(order)} LIMIT ${q.limit + 1} OFFSET ${q.offset}`.execute(this.db)
    return { rows: rows.slice(0, q.limit).map(this.toRecord), hasMore: rows.length > q.limit }
  }

  async groupRows(tableId: string, where: RowCondition, group: GroupSpec[], limit: number, offset: number): Promise<{ rows: JsonObject[]; hasMore: boolean }> {
    const keys = group.filter((g) => g.ops.includes('key'))
    const selects: RawBuilder<unknown>[] = []
    const outputs: { alias: string; name: string; kind: 'key' | 'number' | 'count' | 'keytype' }[] = []
    keys.forEach((g, i) => {
      selects.push(sql`${this.x.value(g.field.path)} AS ${sql.raw(`k${i}`)}`, sql`${this.x.type(g.field.path)} AS ${sql.raw(`t${i}`)}`)
      outputs.push({ alias: `k${i}`, name: `${g.name}Key`, kind: 'key' })
    })
    let a = 0
    for (const g of group) {
      for (const op of g.ops) {
        if (op === 'key') continue
        const alias = `a${a++}`
        const name = `${g.name}${op[0]!.toUpperCase()}${op.slice(1)}`
        if (op === 'count') {
          selects.push(sql`SUM(CASE WHEN ${this.x.isNull(g.field.path)} THEN 0 ELSE 1 END) AS ${sql.raw(alias)}`)
          outputs.push({ alias, name, kind: 'count' })
        } else {
          const fn = sql.raw(op.toUpperCase())
          const expr = g.field.type === 'string' && (op === 'min' || op === 'max') ? this.x.text(g.field.path) : this.x.number(g.field.path)
          selects.push(sql`${fn}(${expr}) AS ${sql.raw(alias)}`)
          outputs.push({ alias, name, kind: g.field.type === 'string' && (op === 'min' || op === 'max') ? 'key' : 'number' })
        }
      }
    }
    if (selects.length === 0) return { rows: [], hasMore: false }
    const groupBy = keys.length > 0 ? sql` GROUP BY ${sql.join(keys.flatMap((_, i) => [sql.raw(`k${i}`), sql.raw(`t${i}`)]))} ORDER BY ${sql.join(keys.map((_, i) => sql.raw(`k${i} ASC NULLS FIRST`)))}` : sql``
    const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selects)} FROM bot_table_rows
      WHERE table_id = ${tableId} AND ${this.cond(where)}${groupBy} LIMIT ${limit + 1} OFFSET ${offset}`.execute(this.db)
    const out = rows.slice(0, limit).map((r) => {
      const o: JsonObject = {}
      keys.forEach((_, i) => {
        o[outputs[i]!.name] = this.x.decode(r[`k${i}`], r[`t${i}`])
      })
      for (const out of outputs.slice(keys.length)) {
        const v = r[out.alias]
        o[out.name] = v === null || v === undefined ? (out.kind === 'count' ? 0 : null) : out.kind === 'key' ? String(v) : Number(v)
      }
      return o
    })
    return { rows: out, hasMore: rows.length > limit }
  }

  async scanRows(tableId: string, afterId: number, limit: number): Promise<TableRecord[]> {
    const rows = await this.db.selectFrom('bot_table_rows').select(['id', 'data', 'created_at', 'updated_at'])
      .where('table_id', '=', tableId).where('id', '>', afterId).orderBy('id').limit(limit).execute()
    return rows.map(this.toRecord)
  }

  // ---- jobs ----

  async createJob(j: TableJobRow): Promise<void> {
    await this.db.insertInto('bot_table_jobs').values({
      id: j.id, bot_id: j.botId, table_id: j.tableId, type: j.type, status: j.status, progress: j.progress, params: JSON.stringify(j.params),
      input_file_id: j.inputFileId, output_file_id: j.outputFileId, error: j.error, attempts: 0, lease_owner: null, lease_until: 0,
      created_at: j.createdAt, updated_at: j.updatedAt,
    }).execute()
  }

  async getJob(id: string): Promise<TableJobRow | undefined> {
    const r = await this.db.selectFrom('bot_table_jobs').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toJob(r)
  }

  async listJobs(tableId: string, limit: number): Promise<TableJobRow[]> {
    const rows = await this.db.selectFrom('bot_table_jobs').selectAll().where('table_id', '=', tableId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
    return rows.map(toJob)
  }

  async claimJob(owner: string, now: number, leaseMs: number): Promise<TableJobRow | undefined> {
    // As KyselyWebhookStore.claim: the outer WHERE repeats the conditions for concurrent claimers.
    const r = await this.db.updateTable('bot_table_jobs')
      .set((eb) => ({ lease_owner: owner, lease_until: now + leaseMs, attempts: eb('attempts', '+', 1), status: 'in_progress', updated_at: now }))
      .where('id', '=', (eb) => eb.selectFrom('bot_table_jobs').select('id')
        .where('status', 'in', ['pending', 'in_progress', 'finalizing']).where('lease_until', '<=', now)
        .orderBy('created_at').orderBy('id').limit(1))
      .where('status', 'in', ['pending', 'in_progress', 'finalizing']).where('lease_until', '<=', now)
      .returningAll().executeTakeFirst()
    return r && toJob(r)
  }

  async updateJob(id: string, owner: string, patch: { status?: JobStatus; progress?: number; params?: JsonObject; outputFileId?: string; error?: string }, now: number, leaseUntil: number): Promise<boolean> {
    const done = patch.status === 'completed' || patch.status === 'failed'
    const r = await this.db.updateTable('bot_table_jobs').set({
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.progress !== undefined ? { progress: patch.progress } : {}),
      ...(patch.params !== undefined ? { params: JSON.stringify(patch.params) } : {}),
      ...(patch.outputFileId !== undefined ? { output_file_id: patch.outputFileId } : {}),
      ...(patch.error !== undefined ? { error: patch.error } : {}),
      ...(done ? { lease_owner: null, lease_until: 0 } : { lease_until: leaseUntil }),
      updated_at: now,
    }).where('id', '=', id).where('lease_owner', '=', owner).where('status', 'in', ['pending', 'in_progress', 'finalizing']).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  async releaseJob(id: string, owner: string): Promise<void> {
    await this.db.updateTable('bot_table_jobs').set({ lease_owner: null, lease_until: 0 })
      .where('id', '=', id).where('lease_owner', '=', owner).execute()
  }

  // ---- condition compiler ----

  private fieldNumber(f: FieldRef): RawBuilder<unknown> {
    switch (f.kind) {
      case 'id': return sql.raw('id')
      case 'createdAt': return sql.raw('created_at')
      case 'updatedAt': return sql.raw('updated_at')
      case 'json': return this.x.number(f.path)
    }
  }

  private orderExpr(f: FieldRef): RawBuilder<unknown> {
    if (f.kind !== 'json') return this.fieldNumber(f)
    if (f.type === 'number') return this.x.number(f.path)
    if (f.type === 'string') return this.x.text(f.path)
    return this.x.json(f.path)
  }

  /** A condition as a boolean that is never NULL (so NOT works as the reference evaluation expects). */
  cond(c: RowCondition): RawBuilder<unknown> {
    const T = this.x.isTrue
    switch (c.op) {
      case 'true': return sql`1 = 1`
      case 'and':
      case 'or':
        if (c.items.length === 0) return c.op === 'and' ? sql`1 = 1` : sql`1 = 0`
        return sql`(${sql.join(c.items.map((i) => this.cond(i)), sql.raw(c.op === 'and' ? ' AND ' : ' OR '))})`
      case 'not': return sql`NOT (${this.cond(c.item)})`
      case 'exists':
        return c.field.kind === 'json' ? sql`(${this.x.json(c.field.path)} IS NOT NULL)` : sql`1 = 1`
      case 'isNull':
        return c.field.kind === 'json' ? this.x.isNull(c.field.path) : sql`1 = 0`
      case 'typeIn':
        if (c.field.kind !== 'json') return sql`1 = 1`
        return T(sql`${this.x.type(c.field.path)} IN (${sql.join(c.types.flatMap((t) => this.x.typeNames(t)))})`)
      case 'regex': {
        if (c.field.kind !== 'json') return sql`1 = 0`
        return T(this.x.regex(c.field.path, c.pattern, c.flags))
      }
      case 'in': {
        const parts: RawBuilder<unknown>[] = []
        const numbers = c.values.filter((v): v is number => typeof v === 'number')
        const strings = c.values.filter((v): v is string => typeof v === 'string')
        const f = c.field
        if (f.kind !== 'json') {
          if (numbers.length > 0) parts.push(sql`${this.fieldNumber(f)} IN (${sql.join(numbers.map((n) => sql`CAST(${n} AS DOUBLE PRECISION)`))})`)
        } else if (f.isKey && (numbers.length > 0 || strings.length > 0)) {
          parts.push(sql`(key_value IS NOT NULL AND key_value IN (${sql.join([...numbers, ...strings].map((v) => JSON.stringify(v)))}))`)
        } else {
          if (numbers.length > 0) parts.push(T(sql`${this.x.number(f.path)} IN (${sql.join(numbers)})`))
          if (strings.length > 0) parts.push(T(sql`${this.x.text(f.path)} IN (${sql.join(strings)})`))
        }
        if (f.kind === 'json') {
          for (const b of [true, false]) if (c.values.includes(b)) parts.push(this.x.isBool(f.path, b))
          if (c.values.includes(null)) parts.push(this.x.isNull(f.path))
        }
        return parts.length === 0 ? sql`1 = 0` : sql`(${sql.join(parts, sql.raw(' OR '))})`
      }
      default: {
        const op = sql.raw({ eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' }[c.op])
        const f = c.field
        const v = c.value
        // Built-ins are integers; the operand may not be (PostgreSQL would refuse 0.5 as a BIGINT parameter).
        if (f.kind !== 'json') return typeof v === 'number' ? sql`${this.fieldNumber(f)} ${op} CAST(${v} AS DOUBLE PRECISION)` : sql`1 = 0`
        if (typeof v === 'boolean') return c.op === 'eq' ? this.x.isBool(f.path, v) : sql`1 = 0`
        // Never NULL, and still a plain equality the key index serves.
        if (c.op === 'eq' && f.isKey) return sql`(key_value IS NOT NULL AND key_value = ${JSON.stringify(v)})`
        if (typeof v === 'number') return T(sql`${this.x.number(f.path)} ${op} ${v}`)
        return T(sql`${this.x.text(f.path)} ${op} ${v}`)
      }
    }
  }
}

/** Per-engine expressions over a row's `data` document; `path` segments were checked by `segment`. */
interface DocumentSql {
  /** The value as JSON (NULL when missing). */
  json(path: string[]): RawBuilder<unknown>
  /** The value's JSON type name as the engine spells it (NULL when missing). */
  type(path: string[]): RawBuilder<unknown>
  typeNames(t: string): string[]
  /** The value when it is a JSON number, else NULL. */
  number(path: string[]): RawBuilder<unknown>
  /** The value when it is a JSON string (compared byte-wise), else NULL. */
  text(path: string[]): RawBuilder<unknown>
  /** The raw value, for group keys (decoded with its type by `decode`). */
  value(path: string[]): RawBuilder<unknown>
  decode(value: unknown, type: unknown): JsonObject[string]
  isBool(path: string[], b: boolean): RawBuilder<unknown>
  isNull(path: string[]): RawBuilder<unknown>
  isTrue(e: RawBuilder<unknown>): RawBuilder<unknown>
  regex(path: string[], pattern: string, flags: string): RawBuilder<unknown>
  similarity(terms: string[]): RawBuilder<unknown>
  renameKey(from: string, to: string): RawBuilder<unknown>
}

const sqlitePath = (path: string[]) => sql.lit(`$.${path.map(segment).join('.')}`)

const sqliteSql: DocumentSql = {
  json: (p) => sql`json_extract(data, ${sqlitePath(p)})`,
  type: (p) => sql`json_type(data, ${sqlitePath(p)})`,
  typeNames: (t) => ({ string: ['text'], number: ['integer', 'real'], boolean: ['true', 'false'], object: ['object'], array: ['array'], null: ['null'] } as Record<string, string[]>)[t] ?? [],
  number: (p) => sql`(CASE WHEN json_type(data, ${sqlitePath(p)}) IN ('integer', 'real') THEN json_extract(data, ${sqlitePath(p)}) END)`,
  text: (p) => sql`(CASE WHEN json_type(data, ${sqlitePath(p)}) = 'text' THEN json_extract(data, ${sqlitePath(p)}) END)`,
  value: (p) => sql`json_extract(data, ${sqlitePath(p)})`,
  decode: (v, t) => {
    if (t === null || t === undefined || t === 'null') return null
    if (t === 'true') return true
    if (t === 'false') return false
    if (t === 'object' || t === 'array') return JSON.parse(String(v)) as JsonObject
    return v as string | number
  },
  isBool: (p, b) => sql`((json_type(data, ${sqlitePath(p)}) = ${b ? 'true' : 'false'}) IS 1)`,
  isNull: (p) => sql`(json_type(data, ${sqlitePath(p)}) IS NULL OR json_type(data, ${sqlitePath(p)}) = 'null')`,
  isTrue: (e) => sql`((${e}) IS 1)`,
  // parley_regexp is registered on the connection (src/store/sqlite.ts) with bounds on pattern and input.
  regex: (p, pattern, flags) => sql`parley_regexp(${pattern}, ${flags}, (CASE WHEN json_type(data, ${sqlitePath(p)}) = 'text' THEN json_extract(data, ${sqlitePath(p)}) END))`,
  similarity: (terms) => sql`((${sql.join(terms.map((t) => sql`(instr(search_text, ${t}) > 0)`), sql.raw(' + '))}) * 1.0 / ${terms.length})`,
  renameKey: (from, to) => sql`json_set(json_remove(data, ${sqlitePath([from])}), ${sqlitePath([to])}, json_extract(data, ${sqlitePath([from])}))`,
}

const pgPath = (path: string[]) => sql.lit(`{${path.map(segment).join(',')}}`)

const postgresSql: DocumentSql = {
  json: (p) => sql`(data #> ${pgPath(p)})`,
  type: (p) => sql`jsonb_typeof(data #> ${pgPath(p)})`,
  typeNames: (t) => [t],
  number: (p) => sql`(CASE WHEN jsonb_typeof(data #> ${pgPath(p)}) = 'number' THEN (data #>> ${pgPath(p)})::float8 END)`,
  text: (p) => sql`(CASE WHEN jsonb_typeof(data #> ${pgPath(p)}) = 'string' THEN (data #>> ${pgPath(p)}) END) COLLATE "C"`,
  value: (p) => sql`(data #> ${pgPath(p)})`,
  decode: (v) => (v === undefined ? null : v as JsonObject[string]),
  isBool: (p, b) => sql`((data #> ${pgPath(p)}) = ${sql.lit(b ? 'true' : 'false')}::jsonb) IS TRUE`,
  isNull: (p) => sql`((data #> ${pgPath(p)}) IS NULL OR (data #> ${pgPath(p)}) = 'null'::jsonb)`,
  isTrue: (e) => sql`((${e}) IS TRUE)`,
  regex: (p, pattern, flags) => sql`((CASE WHEN jsonb_typeof(data #> ${pgPath(p)}) = 'string' THEN (data #>> ${pgPath(p)}) END) ${sql.raw(flags.includes('i') ? '~*' : '~')} ${pattern})`,
  similarity: (terms) => sql`((${sql.join(terms.map((t) => sql`(strpos(search_text, ${t}) > 0)::int`), sql.raw(' + '))})::float8 / ${terms.length})`,
  renameKey: (from, to) => sql`((data - ${from}::text) || jsonb_build_object(${to}::text, data -> ${from}::text))`,
}
