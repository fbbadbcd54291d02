import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely'
import type { Database } from './schema.js'
import { decodeCursor, encodeCursor } from '../cursor.js'
import { CONTENT_STATUSES, type FileRow, type FileStore } from '../file-store.js'
import type {
  KnowledgeBaseRow, KnowledgeStore, NewPassage, PassageFileFilter, PassageHit, PassageMeta, PassageRow, PassageSearch,
} from '../knowledge-store.js'
import type { Page, PageRequest } from '../store.js'

/** Tables of migrations/<dialect>/0004_knowledge.sql (kb_passages is an FTS5 table on SQLite). */
interface KnowledgeTables {
  knowledge_bases: { id: string; bot_id: string; name: string; tags: string; created_at: number; updated_at: number }
  kb_terms: { bot_id: string; term: string }
  kb_index_claims: { file_id: string; blob_name: string; owner: string; claimed_at: number }
}
type Db = Kysely<Database & KnowledgeTables>
type DbOrTrx = Db | Transaction<Database & KnowledgeTables>

/** Only letters and digits reach a MATCH / to_tsquery expression: FTS syntax can never be injected. */
const WORD = /^[\p{L}\p{N}]{1,64}$/u
const BATCH = 200

interface PassageRecord { file_id: string; position: number | string; title: string; content: string; meta: string }

export const toPassage = (r: PassageRecord): PassageRow => ({
  id: `${r.file_id}:${Number(r.position)}`,
  fileId: r.file_id,
  position: Number(r.position),
  title: r.title,
  content: r.content,
  meta: JSON.parse(r.meta) as PassageMeta,
})

const toKb = (r: KnowledgeTables['knowledge_bases']): KnowledgeBaseRow => ({
  id: r.id, botId: r.bot_id, name: r.name, tags: JSON.parse(r.tags) as Record<string, string>,
  createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
})

/** `EXISTS` per tag: the file `f` carries every tag of the set. */
function tagsMatch(tags: Record<string, string>): RawBuilder<unknown> {
  const entries = Object.entries(tags)
  if (entries.length === 0) return sql`1 = 1`
  return sql.join(
    entries.map(([k, v]) => sql`EXISTS (SELECT 1 FROM file_tags t WHERE t.file_id = f.id AND t.key = ${k} AND t.value = ${v})`),
    sql` AND `,
  )
}

export function fileFilter(filter: PassageFileFilter | undefined): RawBuilder<unknown> {
  const parts = [tagsMatch(filter?.all ?? {})]
  if (filter?.any !== undefined) {
    parts.push(filter.any.length === 0 ? sql`1 = 0` : sql`(${sql.join(filter.any.map((t) => sql`(${tagsMatch(t)})`), sql` OR `)})`)
  }
  return sql.join(parts, sql` AND `)
}

export class KyselyKnowledgeStore implements KnowledgeStore {
  private readonly db: Db

  constructor(db: Kysely<Database>, private readonly dialect: 'sqlite' | 'postgres', private readonly files: FileStore) {
    this.db = db as unknown as Db
  }

  // ---- knowledge bases ----

  async createKnowledgeBase(row: KnowledgeBaseRow): Promise<KnowledgeBaseRow> {
    await this.db.insertInto('knowledge_bases').values({
      id: row.id, bot_id: row.botId, name: row.name, tags: JSON.stringify(row.tags), created_at: row.createdAt, updated_at: row.updatedAt,
    }).execute()
    return row
  }

  async getKnowledgeBase(botId: string, id: string): Promise<KnowledgeBaseRow | undefined> {
    const r = await this.db.selectFrom('knowledge_bases').selectAll().where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
    return r && toKb(r)
  }

  async updateKnowledgeBase(botId: string, id: string, patch: { name: string; tags: Record<string, string> }, now: number): Promise<KnowledgeBaseRow | undefined> {
    const r = await this.db.updateTable('knowledge_bases').set({ name: patch.name, tags: JSON.stringify(patch.tags), updated_at: now })
      .where('bot_id', '=', botId).where('id', '=', id).returningAll().executeTakeFirst()
    return r && toKb(r)
  }

  async deleteKnowledgeBase(botId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('knowledge_bases').where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async listKnowledgeBases(botId: string, tags: Record<string, string> | undefined, page: PageRequest): Promise<Page<KnowledgeBaseRow>> {
    // Knowledge bases are few per bot: tags are filtered after the read, pages are keyset on (createdAt, id).
    let q = this.db.selectFrom('knowledge_bases').selectAll().where('bot_id', '=', botId)
    if (page.after !== undefined) {
      const [createdAt, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('created_at', '>', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '>', id)])]))
    }
    const rows = (await q.orderBy('created_at').orderBy('id').execute()).map(toKb)
      .filter((kb) => Object.entries(tags ?? {}).every(([k, v]) => kb.tags[k] === v))
    if (rows.length <= page.limit) return { items: rows }
    const items = rows.slice(0, page.limit)
    const last = items[items.length - 1]!
    return { items, next: encodeCursor([last.createdAt, last.id]) }
  }

  // ---- passages ----

  addPassages(botId: string, fileId: string, blobName: string, passages: NewPassage[]): Promise<void> {
    return this.insertPassages(this.db, botId, fileId, blobName, passages)
  }

  private async insertPassages(db: DbOrTrx, botId: string, fileId: string, blobName: string, passages: NewPassage[]): Promise<void> {
    for (let i = 0; i < passages.length; i += BATCH) {
      const rows = passages.slice(i, i + BATCH).map((p) => sql`(${botId}, ${fileId}, ${blobName}, ${p.position}, ${p.title}, ${p.content}, ${JSON.stringify(p.meta)})`)
      await sql`INSERT INTO kb_passages (bot_id, file_id, blob_name, position, title, content, meta) VALUES ${sql.join(rows)}`.execute(db)
    }
  }

  async setPassages(botId: string, fileId: string, blobName: string, passages: NewPassage[], now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('files').set({ status: 'indexing_completed', failed_status_reason: null, updated_at: now })
        .where('bot_id', '=', botId).where('id', '=', fileId).where('blob_name', '=', blobName).where('status', 'in', [...CONTENT_STATUSES])
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) === 0) return false
      await this.deleteFilePassagesIn(trx, botId, fileId)
      await this.insertPassages(trx, botId, fileId, blobName, passages)
      return true
    })
  }

  async addTerms(botId: string, terms: string[]): Promise<void> {
    const unique = [...new Set(terms.filter((t) => WORD.test(t)))]
    for (let i = 0; i < unique.length; i += BATCH) {
      await this.db.insertInto('kb_terms').values(unique.slice(i, i + BATCH).map((term) => ({ bot_id: botId, term })))
        .onConflict((oc) => oc.columns(['bot_id', 'term']).doNothing()).execute()
    }
  }

  async knownTerms(botId: string, candidates: string[]): Promise<Set<string>> {
    if (candidates.length === 0) return new Set()
    const rows = await this.db.selectFrom('kb_terms').select('term').where('bot_id', '=', botId).where('term', 'in', candidates).execute()
    return new Set(rows.map((r) => r.term))
  }

  async termsWithPrefix(botId: string, prefix: string, limit: number): Promise<string[]> {
    if (!WORD.test(prefix)) return []
    // A range instead of LIKE: no escaping, and both engines use the primary key (byte order).
    const rows = await this.db.selectFrom('kb_terms').select('term').where('bot_id', '=', botId)
      .where('term', '>=', prefix).where('term', '<', `${prefix}\u{10FFFF}`).orderBy('term').limit(limit).execute()
    return rows.map((r) => r.term)
  }

  async completeIndexing(botId: string, fileId: string, blobName: string, failure: string | null, now: number): Promise<boolean> {
    const r = await this.db.updateTable('files')
      .set({ status: failure === null ? 'indexing_completed' : 'indexing_failed', failed_status_reason: failure, updated_at: now })
      .where('bot_id', '=', botId).where('id', '=', fileId).where('blob_name', '=', blobName).where('status', '=', 'indexing_pending')
      .executeTakeFirst()
    const done = Number(r.numUpdatedRows) > 0
    // Done: passages of older content are garbage. Failed or superseded: this attempt's passages are
    // (a newer upload may be indexing its own version meanwhile: leave those).
    if (failure !== null || !done) await sql`DELETE FROM kb_passages WHERE bot_id = ${botId} AND file_id = ${fileId} AND blob_name = ${blobName}`.execute(this.db)
    if (done) await sql`DELETE FROM kb_passages WHERE bot_id = ${botId} AND file_id = ${fileId} AND blob_name <> ${blobName}`.execute(this.db)
    return done
  }

  async markIndexingPending(botId: string, fileId: string, blobName: string, now: number): Promise<FileRow | undefined> {
    const r = await this.db.updateTable('files').set({ status: 'indexing_pending', failed_status_reason: null, updated_at: now })
      .where('bot_id', '=', botId).where('id', '=', fileId).where('blob_name', '=', blobName).where('indexed', '=', 1)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0 ? this.files.getFile(botId, fileId) : undefined
  }

  async claimIndexing(fileId: string, blobName: string, owner: string, now: number, staleBefore: number): Promise<boolean> {
    const r = await this.db.insertInto('kb_index_claims').values({ file_id: fileId, blob_name: blobName, owner, claimed_at: now })
      .onConflict((oc) => oc.column('file_id').doUpdateSet({ blob_name: blobName, owner, claimed_at: now })
        .where((eb) => eb.or([eb('kb_index_claims.claimed_at', '<', staleBefore), eb('kb_index_claims.blob_name', '<>', blobName), eb('kb_index_claims.owner', '=', owner)])))
      .returning('file_id').executeTakeFirst()
    return r !== undefined
  }

  async releaseIndexing(fileId: string, owner: string): Promise<void> {
    await this.db.deleteFrom('kb_index_claims').where('file_id', '=', fileId).where('owner', '=', owner).execute()
  }

  async listPendingIndexing(limit: number): Promise<FileRow[]> {
    const rows = await this.db.selectFrom('files').select(['bot_id', 'id']).where('status', '=', 'indexing_pending')
      .orderBy('updated_at').orderBy('id').limit(limit).execute()
    const files = await Promise.all(rows.map((r) => this.files.getFile(r.bot_id, r.id)))
    return files.filter((f): f is FileRow => f !== undefined)
  }

  deleteFilePassages(botId: string, fileId: string): Promise<void> {
    return this.deleteFilePassagesIn(this.db, botId, fileId)
  }

  private async deleteFilePassagesIn(db: DbOrTrx, botId: string, fileId: string): Promise<void> {
    await sql`DELETE FROM kb_passages WHERE bot_id = ${botId} AND file_id = ${fileId}`.execute(db)
  }

  async deleteBotPassages(botId: string): Promise<void> {
    await sql`DELETE FROM kb_passages WHERE bot_id = ${botId}`.execute(this.db)
  }

  /** Passages of the file's current content. */
  private current(botId: string, fileId: string): RawBuilder<unknown> {
    return sql`p.bot_id = ${botId} AND p.file_id = ${fileId} AND p.blob_name = (SELECT f.blob_name FROM files f WHERE f.bot_id = ${botId} AND f.id = ${fileId})`
  }

  async listFilePassages(botId: string, fileId: string, page: PageRequest): Promise<Page<PassageRow>> {
    const after = page.after === undefined ? -1 : (decodeCursor(page.after, ['number'])[0] as number)
    const { rows } = await sql<PassageRecord>`SELECT p.file_id, p.position, p.title, p.content, p.meta FROM kb_passages p
      WHERE ${this.current(botId, fileId)} AND p.position > ${after} ORDER BY p.position LIMIT ${page.limit + 1}`.execute(this.db)
    const items = rows.slice(0, page.limit).map(toPassage)
    if (rows.length <= page.limit) return { items }
    return { items, next: encodeCursor([items[items.length - 1]!.position]) }
  }

  async passagesAround(botId: string, fileId: string, position: number, depth: number): Promise<PassageRow[]> {
    const { rows } = await sql<PassageRecord>`SELECT p.file_id, p.position, p.title, p.content, p.meta FROM kb_passages p
      WHERE ${this.current(botId, fileId)} AND p.position >= ${position - depth} AND p.position <= ${position + depth} ORDER BY p.position`.execute(this.db)
    return rows.map(toPassage)
  }

  async searchPassages(s: PassageSearch): Promise<PassageHit[]> {
    const terms = [...new Set(s.terms.filter((t) => WORD.test(t)))]
    const prefixes = [...new Set((s.prefixes ?? []).filter((t) => WORD.test(t)))]
    if (terms.length + prefixes.length === 0 || s.limit <= 0) return []
    const visible = sql`f.bot_id = ${s.botId} AND f.status = 'indexing_completed' AND (f.expires_at IS NULL OR f.expires_at > ${s.now}) AND ${fileFilter(s.files)}`
    let rows: (PassageRecord & { score: number | string })[]
    if (this.dialect === 'sqlite') {
      const match = [...terms.map((t) => `"${t}"`), ...prefixes.map((t) => `"${t}"*`)].join(' OR ')
      // bm25 is lower-is-better; the title column weighs 3x the content. First the best matches of the full-text
      // index alone: filtering every match by bot and file reads each one's row (bot_id is not indexed), ~10× the
      // cost of ranking them. Filtering keeps their order, so when enough of them are this bot's visible passages
      // they are exactly its best; otherwise (many bots, narrow tags) the filtered query ranks every match.
      const first = Math.max(4 * s.limit, 200)
      const { rows: best } = await sql<{ rid: number; score: number }>`SELECT rowid AS rid, -bm25(kb_passages, 3.0, 1.0) AS score
        FROM kb_passages WHERE kb_passages MATCH ${match} ORDER BY bm25(kb_passages, 3.0, 1.0) LIMIT ${first}`.execute(this.db)
      const score = new Map(best.map((r) => [Number(r.rid), Number(r.score)]))
      rows = []
      // Read in rank order, `limit` at a time, until `limit` of them pass the filter.
      for (let at = 0; at < best.length && rows.length < s.limit; at += s.limit) {
        const slice = best.slice(at, at + s.limit).map((r) => Number(r.rid))
        const { rows: kept } = await sql<PassageRecord & { rid: number }>`SELECT p.rowid AS rid, p.file_id, p.position, p.title, p.content, p.meta
          FROM kb_passages p JOIN files f ON f.id = p.file_id AND f.blob_name = p.blob_name
          WHERE p.rowid IN (${sql.join(slice)}) AND p.bot_id = ${s.botId} AND ${visible}`.execute(this.db)
        rows.push(...kept.map((r) => ({ ...r, score: score.get(Number(r.rid))! })))
      }
      rows = rows.sort((a, b) => Number(b.score) - Number(a.score) || a.file_id.localeCompare(b.file_id) || Number(a.position) - Number(b.position)).slice(0, s.limit)
      if (rows.length < s.limit && best.length === first) {
        ;({ rows } = await sql<PassageRecord & { score: number }>`SELECT p.file_id, p.position, p.title, p.content, p.meta, -bm25(kb_passages, 3.0, 1.0) AS score
          FROM kb_passages p JOIN files f ON f.id = p.file_id AND f.blob_name = p.blob_name
          WHERE kb_passages MATCH ${match} AND p.bot_id = ${s.botId} AND ${visible}
          ORDER BY bm25(kb_passages, 3.0, 1.0) LIMIT ${s.limit}`.execute(this.db))
      }
    } else {
      const query = [...terms, ...prefixes.map((t) => `${t}:*`)].join(' | ')
      ;({ rows } = await sql<PassageRecord & { score: number }>`SELECT p.file_id, p.position, p.title, p.content, p.meta, ts_rank(p.tsv, q.q, 1) AS score
        FROM kb_passages p JOIN files f ON f.id = p.file_id AND f.blob_name = p.blob_name, to_tsquery('english', ${query}) AS q(q)
        WHERE p.tsv @@ q.q AND p.bot_id = ${s.botId} AND ${visible}
        ORDER BY score DESC, p.file_id, p.position LIMIT ${s.limit}`.execute(this.db))
    }
    const files = new Map<string, FileRow | undefined>()
    for (const r of rows) if (!files.has(r.file_id)) files.set(r.file_id, await this.files.getFile(s.botId, r.file_id))
    return rows.flatMap((r) => {
      const file = files.get(r.file_id)
      return file ? [{ ...toPassage(r), score: Number(r.score), file }] : []
    })
  }

  async termFrequencies(botId: string, terms: string[]): Promise<{ total: number; df: Map<string, number> }> {
    const valid = [...new Set(terms.filter((t) => WORD.test(t)))]
    const df = new Map<string, number>()
    if (this.dialect === 'sqlite') {
      // Per bot, the FTS5 table would read every match's bot_id from its content table (tens of ms for a
      // common word over 20,000 passages): counts come from the full-text index alone, over every bot's
      // passages, when the bot has any (they only weigh terms against each other).
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM (SELECT 1 FROM kb_passages WHERE bot_id = ${botId} LIMIT 1)`.execute(this.db)
      if (Number(rows[0]?.n ?? 0) === 0) return { total: 0, df: new Map(valid.map((t) => [t, 0])) }
      // The docsize shadow table has one narrow row per passage: counting it does not read every passage's text.
      const all = await sql<{ n: number }>`SELECT count(*) AS n FROM kb_passages_docsize`.execute(this.db)
      for (const t of valid) {
        const r = await sql<{ n: number }>`SELECT count(*) AS n FROM kb_passages WHERE kb_passages MATCH ${`"${t}"`}`.execute(this.db)
        df.set(t, Number(r.rows[0]?.n ?? 0))
      }
      return { total: Number(all.rows[0]?.n ?? 0), df }
    }
    const counts = valid.map((t, i) => sql`count(*) FILTER (WHERE tsv @@ to_tsquery('english', ${t})) AS ${sql.ref(`d${i}`)}`)
    const { rows } = await sql<Record<string, number | string>>`SELECT count(*) AS total${counts.length ? sql`, ${sql.join(counts)}` : sql``} FROM kb_passages WHERE bot_id = ${botId}`.execute(this.db)
    const row = rows[0] ?? {}
    valid.forEach((t, i) => df.set(t, Number(row[`d${i}`] ?? 0)))
    return { total: Number(row.total ?? 0), df }
  }
}
