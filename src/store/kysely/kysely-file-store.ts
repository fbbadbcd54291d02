import { sql, type Expression, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely'
import type { Database } from './schema.js'
import { decodeCursor, encodeCursor } from '../cursor.js'
import { errors } from '../../lib/errors.js'
import {
  TAG_CURSOR_MAX, type AccessPolicy, type CompleteUpload, type FileListFilter, type FileOwnerType, type FilePatch, type FileRow, type FileSortField,
  type FileStatus, type FileStore, type NewFile, type NewStoredFile,
} from '../file-store.js'
import { UniqueViolation, type JsonObject, type Page, type PageRequest } from '../store.js'

type Db = Kysely<Database> | Transaction<Database>
type FileRecord = Selectable<Database['files']>

const toFile = (r: FileRecord, tags: Record<string, string>): FileRow => ({
  id: r.id,
  botId: r.bot_id,
  key: r.key,
  contentType: r.content_type,
  size: r.size === null ? null : Number(r.size),
  declaredSize: r.declared_size === null ? null : Number(r.declared_size),
  status: r.status as FileStatus,
  failedStatusReason: r.failed_status_reason,
  blobName: r.blob_name,
  uploadNonce: r.upload_nonce,
  tags,
  metadata: JSON.parse(r.metadata) as JsonObject,
  accessPolicies: JSON.parse(r.access_policies) as AccessPolicy[],
  index: Number(r.indexed) === 1,
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  ownerType: r.owner_type as FileOwnerType,
  ownerId: r.owner_id,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
})

/** Sort keys of listFiles. `size` is NULL while an upload is pending: those rows sort as -1. */
const sortExpression = (field: FileSortField): Expression<string | number> => {
  switch (field) {
    case 'key': return sql.ref<string>('f.key')
    case 'status': return sql.ref<string>('f.status')
    case 'createdAt': return sql.ref<number>('f.created_at')
    case 'updatedAt': return sql.ref<number>('f.updated_at')
    case 'size': return sql<number>`coalesce(${sql.ref('f.size')}, ${sql.lit(-1)})`
  }
}

const sortValue = (file: FileRow, field: FileSortField): string | number => {
  switch (field) {
    case 'key': return file.key
    case 'status': return file.status
    case 'createdAt': return file.createdAt
    case 'updatedAt': return file.updatedAt
    case 'size': return file.size ?? -1
  }
}

const isTextSort = (field: FileSortField) => field === 'key' || field === 'status'

/** Files `f` that have not expired at `now`. */
const unexpired = (now: number) => sql<boolean>`(${sql.ref('f.expires_at')} IS NULL OR ${sql.ref('f.expires_at')} > ${now})`

/** Row values of a new file, without the key-dependent reset of an upsert. */
const fileValues = (f: NewFile) => ({
  content_type: f.contentType,
  size: null as number | null,
  status: 'upload_pending',
  failed_status_reason: null,
  upload_nonce: f.uploadNonce,
  declared_size: f.declaredSize ?? null,
  metadata: JSON.stringify(f.metadata),
  access_policies: JSON.stringify(f.accessPolicies),
  indexed: f.index ? 1 : 0,
  expires_at: f.expiresAt,
  updated_at: f.now,
})

/**
 * The Files API's rows. Portable SQL only (ON CONFLICT, RETURNING, COALESCE, EXISTS); tags are rows
 * of file_tags so that tag filters need no JSON functions.
 */
export class KyselyFileStore implements FileStore {
  constructor(readonly db: Kysely<Database>, private readonly dialect: 'sqlite' | 'postgres') {}

  private async tagsOf(db: Db, ids: string[]): Promise<Map<string, Record<string, string>>> {
    const byFile = new Map<string, Record<string, string>>(ids.map((id) => [id, {}]))
    if (ids.length === 0) return byFile
    const rows = await db.selectFrom('file_tags').selectAll().where('file_id', 'in', ids).orderBy('file_id').orderBy('key').execute()
    for (const r of rows) byFile.get(r.file_id)![r.key] = r.value
    return byFile
  }

  private async withTags(db: Db, r: FileRecord | undefined): Promise<FileRow | undefined> {
    if (!r) return undefined
    const tags = await this.tagsOf(db, [r.id])
    return toFile(r, tags.get(r.id) ?? {})
  }

  private async insertTags(db: Db, fileId: string, tags: Record<string, string>): Promise<void> {
    const entries = Object.entries(tags)
    if (entries.length > 0) await db.insertInto('file_tags').values(entries.map(([key, value]) => ({ file_id: fileId, key, value }))).execute()
  }

  /** Deletes the bot's file row (its tags cascade) and returns it as it was. */
  private async deleteRow(db: Db, botId: string, id: string): Promise<FileRow | undefined> {
    const tags = await this.tagsOf(db, [id])
    const r = await db.deleteFrom('files').where('bot_id', '=', botId).where('id', '=', id).returningAll().executeTakeFirst()
    return r && toFile(r, tags.get(id) ?? {})
  }

  async upsertFile(f: NewFile): Promise<{ file: FileRow; created: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const reset = fileValues(f)
      const r = await trx
        .insertInto('files')
        .values({
          ...reset,
          id: f.id,
          bot_id: f.botId,
          key: f.key,
          blob_name: null,
          owner_type: f.ownerType,
          owner_id: f.ownerId,
          created_at: f.now,
        })
        .onConflict((oc) => oc.columns(['bot_id', 'key']).doUpdateSet(reset))
        .returningAll()
        .executeTakeFirstOrThrow()
      await trx.deleteFrom('file_tags').where('file_id', '=', r.id).execute()
      await this.insertTags(trx, r.id, f.tags)
      return { file: toFile(r, { ...f.tags }), created: r.id === f.id }
    })
  }

  async createStoredFile(f: NewStoredFile, replaceId?: string): Promise<{ file: FileRow; replaced: FileRow | undefined }> {
    return this.db.transaction().execute(async (trx) => {
      const replaced = replaceId === undefined ? undefined : await this.deleteRow(trx, f.botId, replaceId)
      const r = await trx
        .insertInto('files')
        .values({
          ...fileValues(f),
          size: f.size,
          status: 'upload_completed',
          blob_name: f.blobName,
          id: f.id,
          bot_id: f.botId,
          key: f.key,
          owner_type: f.ownerType,
          owner_id: f.ownerId,
          created_at: f.now,
        })
        .onConflict((oc) => oc.columns(['bot_id', 'key']).doNothing())
        .returningAll()
        .executeTakeFirst()
      // Thrown inside the transaction: the replaced row comes back.
      if (!r) throw new UniqueViolation('File')
      await this.insertTags(trx, r.id, f.tags)
      return { file: toFile(r, { ...f.tags }), replaced }
    })
  }

  listTagNames(botId: string, now: number, page: PageRequest): Promise<Page<string>> {
    return this.distinctTags(botId, now, page, sql.ref<string>('t.key'))
  }

  listTagValues(botId: string, tag: string, now: number, page: PageRequest): Promise<Page<string>> {
    // file_tags.value has the database's collation on PostgreSQL: compare bytes, as SQLite does.
    const value = this.dialect === 'postgres' ? sql<string>`${sql.ref('t.value')} COLLATE "C"` : sql.ref<string>('t.value')
    return this.distinctTags(botId, now, page, value, tag)
  }

  /** Distinct values of `column` (a file_tags column) over the bot's live files, keyset-paged on the value itself. */
  private async distinctTags(botId: string, now: number, page: PageRequest, column: RawBuilder<string>, tag?: string): Promise<Page<string>> {
    let q = this.db
      .selectFrom('file_tags as t')
      .innerJoin('files as f', 'f.id', 't.file_id')
      .select(column.as('name'))
      .distinct()
      .where('f.bot_id', '=', botId)
      .where(unexpired(now))
    if (tag !== undefined) q = q.where('t.key', '=', tag)
    if (page.after !== undefined) q = q.where(column, '>', decodeCursor(page.after, ['string'], TAG_CURSOR_MAX)[0] as string)
    const rows = await q.orderBy(column).limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map((r) => r.name)
    if (rows.length <= page.limit) return { items }
    return { items, next: encodeCursor([items[items.length - 1]!]) }
  }

  async getFile(botId: string, id: string): Promise<FileRow | undefined> {
    const r = await this.db.selectFrom('files').selectAll().where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
    return this.withTags(this.db, r)
  }

  async getFileByKey(botId: string, key: string): Promise<FileRow | undefined> {
    const r = await this.db.selectFrom('files').selectAll().where('bot_id', '=', botId).where('key', '=', key).executeTakeFirst()
    return this.withTags(this.db, r)
  }

  async listFiles(filter: FileListFilter, page: PageRequest): Promise<Page<FileRow>> {
    const { sortField, sortDirection } = filter
    const order = sortExpression(sortField)
    const desc = sortDirection === 'desc'
    let q = this.db
      .selectFrom('files as f')
      .selectAll('f')
      .where('f.bot_id', '=', filter.botId)
      .where(unexpired(filter.now))
    if (filter.indexed !== undefined) q = q.where('f.indexed', '=', filter.indexed ? 1 : 0)
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return { items: [] }
      q = q.where('f.id', 'in', filter.ids)
    }
    for (const [key, value] of Object.entries(filter.tags ?? {})) {
      q = q.where((eb) =>
        eb.exists(eb.selectFrom('file_tags as t').select('t.file_id').whereRef('t.file_id', '=', 'f.id').where('t.key', '=', key).where('t.value', '=', value)),
      )
    }
    if (page.after !== undefined) {
      const [field, direction, value, id] = decodeCursor(page.after, ['string', 'string', isTextSort(sortField) ? 'string' : 'number', 'string']) as [string, string, string | number, string]
      if (field !== sortField || direction !== sortDirection) {
        throw errors.invalidQuery('nextToken belongs to a listing with another sortField or sortDirection')
      }
      const op = desc ? '<' : '>'
      q = q.where((eb) => eb.or([eb(order, op, value), eb.and([eb(order, '=', value), eb('f.id', op, id)])]))
    }
    const rows = await q.orderBy(order, desc ? 'desc' : 'asc').orderBy('f.id', desc ? 'desc' : 'asc').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit)
    const tags = await this.tagsOf(this.db, items.map((r) => r.id))
    const files = items.map((r) => toFile(r, tags.get(r.id) ?? {}))
    if (rows.length <= page.limit) return { items: files }
    const last = files[files.length - 1]!
    return { items: files, next: encodeCursor([sortField, sortDirection, sortValue(last, sortField), last.id]) }
  }

  async updateFile(botId: string, id: string, patch: FilePatch, now: number): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('files').select('id').where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
      if (!current) return undefined
      for (const [key, value] of Object.entries(patch.tags ?? {})) {
        if (value === null) {
          await trx.deleteFrom('file_tags').where('file_id', '=', id).where('key', '=', key).execute()
        } else {
          await trx.insertInto('file_tags').values({ file_id: id, key, value }).onConflict((oc) => oc.columns(['file_id', 'key']).doUpdateSet({ value })).execute()
        }
      }
      const r = await trx
        .updateTable('files')
        .set({
          ...(patch.metadata !== undefined && { metadata: JSON.stringify(patch.metadata) }),
          ...(patch.accessPolicies !== undefined && { access_policies: JSON.stringify(patch.accessPolicies) }),
          ...(patch.expiresAt !== undefined && { expires_at: patch.expiresAt }),
          updated_at: now,
        })
        .where('bot_id', '=', botId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
      return this.withTags(trx, r)
    })
  }

  async deleteFile(botId: string, id: string): Promise<FileRow | undefined> {
    return this.db.transaction().execute((trx) => this.deleteRow(trx, botId, id))
  }

  async completeUpload(u: CompleteUpload): Promise<FileRow | undefined> {
    let q = this.db
      .updateTable('files')
      .set({ blob_name: u.blobName, size: u.size, status: 'upload_completed', failed_status_reason: null, updated_at: u.now })
      .where('bot_id', '=', u.botId)
      .where('id', '=', u.id)
      .where('upload_nonce', '=', u.uploadNonce)
      .where('status', '=', 'upload_pending')
    q = u.expectedBlobName === null ? q.where('blob_name', 'is', null) : q.where('blob_name', '=', u.expectedBlobName)
    const r = await q.returningAll().executeTakeFirst()
    return this.withTags(this.db, r)
  }

  async storedBytes(botId: string, pendingSince: number, exceptKey?: string): Promise<number> {
    let q = this.db
      .selectFrom('files')
      .select(sql<string | number>`coalesce(sum(case when size is not null then size when updated_at > ${pendingSince} then coalesce(declared_size, 0) else 0 end), 0)`.as('bytes'))
      .where('bot_id', '=', botId)
    if (exceptKey !== undefined) q = q.where('key', '<>', exceptKey)
    const r = await q.executeTakeFirstOrThrow()
    return Number(r.bytes)
  }

  async createdSince(botId: string, keyPrefix: string, since: number): Promise<{ files: number; bytes: number; oldest: number | null }> {
    // files_bot_created narrows to the window; the prefix is compared as a substring (no LIKE wildcards to escape).
    const r = await this.db
      .selectFrom('files')
      .select([
        sql<string | number>`count(*)`.as('files'),
        sql<string | number>`coalesce(sum(coalesce(size, declared_size, 0)), 0)`.as('bytes'),
        sql<string | number | null>`min(created_at)`.as('oldest'),
      ])
      .where('bot_id', '=', botId)
      .where('created_at', '>', since)
      .where(sql<boolean>`substr(${sql.ref('key')}, 1, ${[...keyPrefix].length}) = ${keyPrefix}`)
      .executeTakeFirstOrThrow()
    return { files: Number(r.files), bytes: Number(r.bytes), oldest: r.oldest === null ? null : Number(r.oldest) }
  }

  async listBlobNames(botId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('files').select('blob_name').where('bot_id', '=', botId).where('blob_name', 'is not', null).execute()
    return rows.map((r) => r.blob_name!).filter(Boolean)
  }

  async listExpired(now: number, limit: number): Promise<FileRow[]> {
    const rows = await this.db
      .selectFrom('files')
      .selectAll()
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .orderBy('id')
      .limit(limit)
      .execute()
    const tags = await this.tagsOf(this.db, rows.map((r) => r.id))
    return rows.map((r) => toFile(r, tags.get(r.id) ?? {}))
  }
}
