import { randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { ApiError } from '../../lib/errors.js'
import type { Json, JsonObject, Store } from '../../store/store.js'
import type { TableJobRow, TableStore } from '../../store/table-store.js'
import type { FileService } from '../file-service.js'
import type { TableRows } from './table-rows.js'
import { parseFilter } from './filter.js'
import { parseDelimited } from '../../lib/csv.js'

export interface TableJobsOptions {
  /** Workers claiming jobs in this instance; 0: this instance runs none (they wait for another, or a restart). */
  workers: number
  leaseMs: number
  pollMs: number
  /** Largest import file and largest export (bytes). */
  maxFileBytes: number
  warn?: ((context: Record<string, unknown>, message: string) => void) | undefined
}

const BATCH = 500

/**
 * The Tables API's background jobs (import, export, delete by filter), durable in bot_table_jobs:
 * a worker claims a job with a lease (renewed at each batch), records its progress and cursor in the
 * job's params with each batch, and marks it completed or failed with the reason. A job whose lease
 * expired (its instance stopped or crashed) is claimed again and resumes from its cursor: deletes
 * re-run their filter (idempotent), imports go on after the rows already imported (a batch and
 * its cursor are written in one transaction, so none is imported twice), exports start over (same file key).
 */
export class TableJobs {
  private readonly store: TableStore
  private readonly owner = `jobs_${randomBytes(6).toString('hex')}`
  private running = false
  private loops: Promise<void>[] = []
  private wake: (() => void) | undefined

  constructor(store: Store, private readonly tables: TableRows, private readonly files: FileService, private readonly options: TableJobsOptions) {
    this.store = store.tables
  }

  /** A job was queued on this instance: a waiting worker takes it now instead of at its next poll. */
  notify(): void {
    this.wake?.()
  }

  get enabled(): boolean {
    return this.options.workers > 0
  }

  start(): void {
    if (this.running || !this.enabled) return
    this.running = true
    for (let i = 0; i < this.options.workers; i++) this.loops.push(this.loop())
  }

  async stop(): Promise<void> {
    this.running = false
    this.wake?.()
    await Promise.all(this.loops)
    this.loops = []
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let job: TableJobRow | undefined
      try {
        job = await this.store.claimJob(this.owner, Date.now(), this.options.leaseMs)
      } catch (err) {
        this.options.warn?.({ err }, 'table job claim failed')
      }
      if (!job) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.pollMs)
          this.wake = () => { clearTimeout(timer); resolve() }
        })
        continue
      }
      await this.run(job)
    }
  }

  private async run(job: TableJobRow): Promise<void> {
    const update = (patch: Parameters<TableStore['updateJob']>[2]) => {
      const now = Date.now()
      return this.store.updateJob(job.id, this.owner, patch, now, now + this.options.leaseMs)
    }
    try {
      if (job.type === 'delete_rows') await this.deleteRows(job, update)
      else if (job.type === 'import') await this.importRows(job, update)
      else await this.exportRows(job, update)
    } catch (err) {
      if (err instanceof Stopped) {
        await this.store.releaseJob(job.id, this.owner).catch(() => {})
        return
      }
      const message = err instanceof ApiError ? err.message : 'internal error'
      if (!(err instanceof ApiError)) this.options.warn?.({ err, jobId: job.id }, 'table job failed')
      await update({ status: 'failed', error: message }).catch(() => {})
    }
  }

  private async tableOf(job: TableJobRow) {
    return this.tables.load(job.botId, job.tableId)
  }

  private async deleteRows(job: TableJobRow, update: (p: Parameters<TableStore['updateJob']>[2]) => Promise<boolean>): Promise<void> {
    const { table, ctx } = await this.tableOf(job)
    const where = job.params.filter === null || job.params.filter === undefined ? { op: 'true' as const } : parseFilter(job.params.filter, ctx)
    let deleted = Number(job.params.deleted ?? 0)
    for (;;) {
      this.checkRunning()
      const n = await this.store.deleteRowsWhere(table.id, where, 1000)
      deleted += n
      if (n < 1000) break
      if (!(await update({ params: { ...job.params, deleted } }))) throw new Stopped()
    }
    await update({ status: 'completed', progress: 1, params: { ...job.params, deleted } })
  }

  private async importRows(job: TableJobRow, update: (p: Parameters<TableStore['updateJob']>[2]) => Promise<boolean>): Promise<void> {
    const loaded = await this.tableOf(job)
    const { content, file } = await this.files.readFile(job.botId, String(job.params.fileId), this.options.maxFileBytes)
    const rows = parseImport(content.toString('utf8'), file.contentType, file.key)
    let offset = Number(job.params.offset ?? 0)
    let refused = Number(job.params.refused ?? 0)
    const firstErrors = (job.params.errors ?? []) as string[]
    while (offset < rows.length) {
      this.checkRunning()
      const types = new Map([...loaded.cols.values()].map((c) => [c.name, c.type as string]))
      const batch = rows.slice(offset, offset + BATCH).map((r) => (r.__csv ? coerceCsv(r, types) : '__invalid' in r ? null : r))
      const out = { errors: [] as string[], warnings: [] as string[] }
      const accepted = batch.flatMap((r, i) => {
        const data = this.tables.check(loaded.table, loaded.cols, r, offset + i, out)
        return data ? [this.tables.record(loaded.table, loaded.cols, data)] : []
      })
      const next = offset + batch.length
      const errors = [...firstErrors, ...out.errors].slice(0, 10)
      let refusedNow = refused
      const now = Date.now()
      // the rows and the cursor past them are written together: a crash imports the batch once or not at all
      const inserted = await this.store.importBatch(loaded.table.id, accepted, now, {
        id: job.id, owner: this.owner, leaseUntil: now + this.options.leaseMs,
        patch: (done) => {
          refusedNow = refused + out.errors.length + done.filter((r) => r === undefined).length
          return { progress: next / rows.length, params: { ...job.params, offset: next, refused: refusedNow, errors } }
        },
      })
      if (!inserted) throw new Stopped()
      offset = next
      refused = refusedNow
      firstErrors.splice(0, firstErrors.length, ...errors)
    }
    await update({
      status: 'completed', progress: 1, params: { ...job.params, offset, refused, errors: firstErrors },
      ...(refused > 0 ? { error: `${refused} of ${rows.length} rows refused; first: ${firstErrors.slice(0, 3).join('; ') || 'duplicate key values'}` } : {}),
    })
  }

  private async exportRows(job: TableJobRow, update: (p: Parameters<TableStore['updateJob']>[2]) => Promise<boolean>): Promise<void> {
    const { table, cols } = await this.tableOf(job)
    const total = await this.store.countRows(table.id)
    const columns = [...cols.keys()]
    const format = job.params.format === 'csv' ? 'csv' : 'json'
    const parts: string[] = []
    let bytes = 0
    let after = 0
    let done = 0
    if (format === 'csv') parts.push(['id', 'createdAt', 'updatedAt', ...columns].map(csvCell).join(',') + '\n')
    for (;;) {
      this.checkRunning()
      const page = await this.store.scanRows(table.id, after, 1000)
      for (const r of page) {
        const created = new Date(r.createdAt).toISOString()
        const updated = new Date(r.updatedAt).toISOString()
        const line = format === 'csv'
          ? [r.id, created, updated, ...columns.map((c) => r.data[c])].map(csvCell).join(',') + '\n'
          : JSON.stringify({ id: r.id, createdAt: created, updatedAt: updated, ...Object.fromEntries(columns.flatMap((c) => (r.data[c] === undefined ? [] : [[c, r.data[c]]]))) })
        bytes += line.length + 1
        if (bytes > this.options.maxFileBytes) throw new ApiError('PayloadTooLarge', `The export is larger than the file limit of ${this.options.maxFileBytes} bytes`)
        parts.push(line)
      }
      done += page.length
      if (page.length < 1000) break
      after = page[page.length - 1]!.id
      if (!(await update({ progress: total === 0 ? 0 : Math.min(0.99, done / total) }))) throw new Stopped()
    }
    await update({ status: 'finalizing', progress: 0.99 })
    const text = format === 'csv' ? parts.join('') : `[${parts.join(',\n')}]\n`
    const compress = job.params.compress === true
    const content = compress ? gzipSync(Buffer.from(text)) : Buffer.from(text)
    const key = `tables/${table.name}/export-${job.id}.${format}${compress ? '.gz' : ''}`
    const file = await this.files.writeFile(job.botId, { key, contentType: compress ? 'application/gzip' : format === 'csv' ? 'text/csv' : 'application/json', tags: { tableId: table.id, tableJobId: job.id } }, content)
    await update({ status: 'completed', progress: 1, outputFileId: file.id })
  }

  private checkRunning(): void {
    if (!this.running) throw new Stopped()
  }
}

class Stopped extends Error {}

const csvCell = (v: Json | number | undefined): string => {
  if (v === undefined || v === null) return ''
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v)
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/**
 * Rows of an import file: a JSON array of objects, JSON lines, or CSV with a header line (values are
 * converted by the column types when the rows are checked: see coerceCsv). 400 when it is none of them.
 */
export function parseImport(text: string, contentType: string, key: string): Record<string, unknown>[] {
  const trimmed = text.trimStart()
  const isJson = contentType.includes('json') || /\.(json|jsonl|ndjson)$/i.test(key) || trimmed.startsWith('[') || trimmed.startsWith('{')
  if (isJson) {
    try {
      const parsed = trimmed.startsWith('[') ? JSON.parse(trimmed) as unknown : trimmed.split(/\r?\n/).filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown)
      if (!Array.isArray(parsed)) throw new Error('not an array')
      return parsed.map((r) => (typeof r === 'object' && r !== null && !Array.isArray(r) ? r as Record<string, unknown> : { __invalid: r }))
    } catch (err) {
      throw new ApiError('InvalidPayload', `The import file is not a JSON array of rows or JSON lines (${(err as Error).message})`)
    }
  }
  const records = parseDelimited(text)
  const header = records.shift()
  if (!header || header.length === 0) throw new ApiError('InvalidPayload', 'The import CSV file has no header line')
  return records.map((r) => {
    const row: Record<string, unknown> = { __csv: true }
    header.forEach((h, i) => {
      if (h !== 'id' && h !== 'createdAt' && h !== 'updatedAt' && r[i] !== undefined && r[i] !== '') row[h] = r[i]
    })
    return row
  })
}

/** CSV values are text: converted to the column's type (numbers, booleans, JSON for objects and arrays). */
export function coerceCsv(row: Record<string, unknown>, types: Map<string, string>): JsonObject {
  const out: JsonObject = {}
  for (const [k, v] of Object.entries(row)) {
    if (k === '__csv' || typeof v !== 'string') continue
    const t = types.get(k)
    if (t === 'number' && v.trim() !== '' && Number.isFinite(Number(v))) out[k] = Number(v)
    else if (t === 'boolean' && (v === 'true' || v === 'false')) out[k] = v === 'true'
    else if ((t === 'object' || t === 'array') && /^[[{]/.test(v)) {
      try { out[k] = JSON.parse(v) as Json } catch { out[k] = v }
    } else out[k] = v
  }
  return out
}
