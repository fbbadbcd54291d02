import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from './schema.js'
import { fileFilter, toPassage } from './kysely-knowledge-store.js'
import type { FileRow, FileStore } from '../file-store.js'
import type { PassageHit } from '../knowledge-store.js'
import type { NewVector, PassageVectorStore, PendingFile, PendingPassage, VectorEngine, VectorSearch } from '../passage-vector-store.js'

/** Vectors are pre-selected by Hamming distance on sign bits, then the best ones scored exactly (see nearest). */
const PRESELECT = 400
const PRESELECT_FACTOR = 8

/** The SQL functions SQLite scores with when sqlite-vec cannot load (src/store/sqlite-vectors.ts registers them). */
export const SQLITE_JS_DISTANCE = 'parley_vec_distance_cosine'
export const SQLITE_JS_HAMMING = 'parley_vec_distance_hamming'

/** The vector scaled to length 1 (cosine similarity becomes a dot product); undefined for a zero or non-finite vector. */
export function normalize(v: Float32Array): Float32Array | undefined {
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  if (!Number.isFinite(norm) || norm === 0) return undefined
  const out = new Float32Array(v.length)
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm
  return out
}

/** float32 little-endian bytes (sqlite-vec's vector format). */
export function vectorBlob(v: Float32Array): Buffer {
  const out = Buffer.alloc(v.length * 4)
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i]!, i * 4)
  return out
}

export function blobVector(b: Uint8Array): Float32Array {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const out = new Float32Array(Math.floor(b.byteLength / 4))
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true)
  return out
}

/** Bit i set when component i is positive: a 1-bit sketch whose Hamming distance tracks the angle. */
const signBits = (v: Float32Array) => Array.from(v, (x) => (x > 0 ? '1' : '0')).join('')
/** The same sketch as bytes, bit i at byte i >> 3, bit i & 7 (sqlite-vec's bit-vector layout). */
export function signBytes(v: Float32Array): Buffer {
  const out = Buffer.alloc(Math.ceil(v.length / 8))
  for (let i = 0; i < v.length; i++) if (v[i]! > 0) out[i >> 3]! |= 1 << (i & 7)
  return out
}

interface PassageRecord { rid: number | string; file_id: string; blob_name: string; position: number | string; title: string; content: string; meta: string; bot_id: string }

export class KyselyPassageVectorStore implements PassageVectorStore {
  private readonly db: Kysely<any>
  readonly engine: VectorEngine

  /** `engine`: given by createSqliteStore once it has loaded sqlite-vec (or failed to); the dialect's portable scoring otherwise. */
  constructor(db: Kysely<Database>, private readonly dialect: 'sqlite' | 'postgres', private readonly files: FileStore, engine?: VectorEngine) {
    this.db = db as Kysely<any>
    this.engine = engine ?? (dialect === 'sqlite' ? { name: 'sqlite-js' } : { name: 'postgres-portable', note: 'pgvector is not used: vectors are real[] scored in SQL' })
  }

  /** The passage row id column of kb_passages (FTS5 rowid on SQLite, rid on PostgreSQL). */
  private get rid(): RawBuilder<unknown> {
    return this.dialect === 'sqlite' ? sql`p.rowid` : sql`p.rid`
  }

  /** A vector row `v` still bound to passage `p`. */
  private bound(): RawBuilder<unknown> {
    return sql`v.passage_rid = ${this.rid} AND v.file_id = p.file_id AND v.blob_name = p.blob_name AND v.position = p.position`
  }

  async filesPending(model: string, now: number, limit: number): Promise<PendingFile[]> {
    // Driven by the passages (one pass, key lookups on files and vectors): FTS5 has no index on file_id.
    const { rows } = await sql<{ bot_id: string; file_id: string; blob_name: string }>`SELECT DISTINCT p.bot_id, p.file_id, p.blob_name
      FROM kb_passages p JOIN files f ON f.id = p.file_id AND f.blob_name = p.blob_name
      WHERE f.status = 'indexing_completed' AND (f.expires_at IS NULL OR f.expires_at > ${now})
        AND NOT EXISTS (SELECT 1 FROM kb_passage_vectors v WHERE v.model = ${model} AND ${this.bound()})
      LIMIT ${limit}`.execute(this.db)
    return rows.map((r) => ({ botId: r.bot_id, fileId: r.file_id, blobName: r.blob_name }))
  }

  async pendingPassages(file: PendingFile, model: string, limit: number): Promise<PendingPassage[]> {
    const { rows } = await sql<PassageRecord>`SELECT ${this.rid} AS rid, p.bot_id, p.file_id, p.blob_name, p.position, p.title, p.content, p.meta
      FROM kb_passages p
      WHERE p.bot_id = ${file.botId} AND p.file_id = ${file.fileId} AND p.blob_name = ${file.blobName}
        AND NOT EXISTS (SELECT 1 FROM kb_passage_vectors v WHERE v.model = ${model} AND ${this.bound()})
      ORDER BY p.position LIMIT ${limit}`.execute(this.db)
    return rows.map((r) => ({
      rid: Number(r.rid), botId: r.bot_id, fileId: r.file_id, blobName: r.blob_name, position: Number(r.position), title: r.title, content: r.content,
    }))
  }

  async putVectors(model: string, vectors: NewVector[]): Promise<number> {
    if (vectors.length === 0) return 0
    return this.db.transaction().execute(async (trx) => {
      let stored = 0
      for (const { passage: p, vector } of vectors) {
        const unit = vector && normalize(vector)
        const dims = unit ? unit.length : 0
        const value = this.dialect === 'sqlite'
          ? sql`${unit ? vectorBlob(unit) : Buffer.alloc(0)}, ${unit ? signBytes(unit) : Buffer.alloc(0)}`
          : sql`${unit ? Array.from(unit) : []}::real[], ${unit ? signBits(unit) : ''}::varbit`
        // Compare-and-set: the passage must still hold the text the vector was computed from.
        const r = await sql`INSERT INTO kb_passage_vectors (model, passage_rid, bot_id, file_id, blob_name, position, dims, vector, signs)
          SELECT ${model}, ${this.rid}, p.bot_id, p.file_id, p.blob_name, p.position, ${dims}, ${value} FROM kb_passages p
          WHERE ${this.rid} = ${p.rid} AND p.bot_id = ${p.botId} AND p.file_id = ${p.fileId} AND p.blob_name = ${p.blobName}
            AND p.position = ${p.position} AND p.title = ${p.title} AND p.content = ${p.content}
          ON CONFLICT (model, passage_rid) DO UPDATE SET bot_id = excluded.bot_id, file_id = excluded.file_id, blob_name = excluded.blob_name,
            position = excluded.position, dims = excluded.dims, vector = excluded.vector, signs = excluded.signs`.execute(trx)
        stored += Number(r.numAffectedRows ?? 0)
      }
      return stored
    })
  }

  async forgetFile(fileId: string): Promise<void> {
    await sql`DELETE FROM kb_passage_vectors WHERE file_id = ${fileId}`.execute(this.db)
  }

  async vectorsOf(model: string, passages: { fileId: string; blobName: string; position: number }[]): Promise<Map<string, Float32Array | null>> {
    const rows = await this.vectorRows(model, passages, true)
    // dims 0: the passage was refused (putVectors with a null vector).
    return new Map(rows.map((r) => [r.id, r.dims === 0 || !r.vector ? null : r.vector instanceof Uint8Array ? blobVector(r.vector) : Float32Array.from(r.vector)]))
  }

  async embeddedOf(model: string, passages: { fileId: string; blobName: string; position: number }[]): Promise<Set<string>> {
    return new Set((await this.vectorRows(model, passages, false)).map((r) => r.id))
  }

  /** The vector rows of `model` bound to these passages' current content (`blobName`), with the vectors or without. */
  private async vectorRows(model: string, passages: { fileId: string; blobName: string; position: number }[], withVectors: boolean) {
    if (passages.length === 0) return []
    const wanted = new Map(passages.map((p) => [`${p.fileId}:${p.position}`, p.blobName]))
    const fileIds = passages.map((p) => p.fileId)
    const positions = passages.map((p) => p.position)
    // By index (model, file_id, position); the blob (the file's current content) is checked on the rows.
    const keys = this.dialect === 'sqlite'
      ? sql`(v.file_id, v.position) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${JSON.stringify(passages.map((p) => [p.fileId, p.position]))}))`
      : sql`(v.file_id, v.position) IN (SELECT * FROM unnest(${fileIds}::text[], ${positions}::int[]))`
    const { rows } = await sql<{ file_id: string; blob_name: string; position: number | string; dims: number | string; vector?: Uint8Array | number[] }>`SELECT v.file_id, v.blob_name, v.position, v.dims${withVectors ? sql`, v.vector` : sql``}
      FROM kb_passage_vectors v WHERE v.model = ${model} AND ${keys}`.execute(this.db)
    return rows.map((r) => ({ id: `${r.file_id}:${Number(r.position)}`, blobName: r.blob_name, dims: Number(r.dims), vector: r.vector }))
      .filter((r) => wanted.get(r.id) === r.blobName)
  }

  async hasVectors(botId: string, model: string): Promise<boolean> {
    const { rows } = await sql`SELECT 1 AS one FROM kb_passage_vectors WHERE bot_id = ${botId} AND model = ${model} AND dims > 0 LIMIT 1`.execute(this.db)
    return rows.length > 0
  }

  async dimsOf(model: string): Promise<number[]> {
    const { rows } = await sql<{ dims: number | string }>`SELECT DISTINCT dims FROM kb_passage_vectors WHERE model = ${model} AND dims > 0`.execute(this.db)
    return rows.map((r) => Number(r.dims)).sort((a, b) => a - b)
  }

  async dropOtherDims(model: string, dims: number): Promise<number> {
    const r = await sql`DELETE FROM kb_passage_vectors WHERE model = ${model} AND dims > 0 AND dims <> ${dims}`.execute(this.db)
    return Number(r.numAffectedRows ?? 0)
  }

  async collectGarbage(model: string, limit: number): Promise<number> {
    const key = this.dialect === 'sqlite' ? sql`rowid` : sql`ctid`
    const r = await sql`DELETE FROM kb_passage_vectors WHERE ${key} IN (
      SELECT v.${key} FROM kb_passage_vectors v
      WHERE v.model <> ${model} OR NOT EXISTS (SELECT 1 FROM kb_passages p WHERE ${this.bound()})
      LIMIT ${limit})`.execute(this.db)
    return Number(r.numAffectedRows ?? 0)
  }

  async claim(fileId: string, owner: string, now: number, staleBefore: number): Promise<boolean> {
    const r = await this.db.insertInto('kb_vector_claims').values({ file_id: fileId, owner, claimed_at: now })
      .onConflict((oc: any) => oc.column('file_id').doUpdateSet({ owner, claimed_at: now })
        .where((eb: any) => eb.or([eb('kb_vector_claims.claimed_at', '<', staleBefore), eb('kb_vector_claims.owner', '=', owner)])))
      .returning('file_id').executeTakeFirst()
    return r !== undefined
  }

  async release(fileId: string, owner: string): Promise<void> {
    await this.db.deleteFrom('kb_vector_claims').where('file_id', '=', fileId).where('owner', '=', owner).execute()
  }

  async nearest(s: VectorSearch): Promise<PassageHit[]> {
    const unit = normalize(s.vector)
    if (!unit || s.limit <= 0) return []
    const preselect = Math.max(PRESELECT, s.limit * PRESELECT_FACTOR)
    const visible = sql`f.bot_id = ${s.botId} AND f.status = 'indexing_completed' AND (f.expires_at IS NULL OR f.expires_at > ${s.now}) AND ${fileFilter(s.files)}`
    let rows: (PassageRecord & { score: number | string })[]
    if (this.dialect === 'sqlite') {
      const vec = this.engine.name === 'sqlite-vec'
      const distance = sql.raw(vec ? 'vec_distance_cosine' : SQLITE_JS_DISTANCE)
      const hamming = vec ? sql`vec_distance_hamming(vec_bit(v.signs), vec_bit(${signBytes(unit)}))` : sql`${sql.raw(SQLITE_JS_HAMMING)}(v.signs, ${signBytes(unit)})`
      // The visible files first (few rows, by index), passed back as a JSON list: the scan of the bot's vectors then
      // checks membership in a small ephemeral index instead of joining files once per vector.
      const { rows: visibleFiles } = await sql<{ id: string; blob_name: string }>`SELECT f.id, f.blob_name FROM files f WHERE ${visible}`.execute(this.db)
      if (visibleFiles.length === 0) return []
      const keys = JSON.stringify(visibleFiles.map((f) => `${f.id}\n${f.blob_name}`))
      // Pre-selection on the covering index (sign sketches, no vector read), then exact cosine (sqlite-vec in C) on
      // the candidates' vectors by primary key; the passage text is read for the top rows only.
      ;({ rows } = await sql<PassageRecord & { score: number }>`SELECT t.rid, p.bot_id, p.file_id, p.blob_name, p.position, p.title, p.content, p.meta, 1 - t.distance AS score
        FROM (SELECT c.rid, c.file_id, c.blob_name, w.position, ${distance}(w.vector, ${vectorBlob(unit)}) AS distance
          FROM (SELECT v.passage_rid AS rid, v.file_id, v.blob_name FROM kb_passage_vectors v
            WHERE v.bot_id = ${s.botId} AND v.model = ${s.model} AND v.dims = ${unit.length}
              AND v.file_id || char(10) || v.blob_name IN (SELECT value FROM json_each(${keys}))
            ORDER BY ${hamming} LIMIT ${preselect}) c
          JOIN kb_passage_vectors w ON w.model = ${s.model} AND w.passage_rid = c.rid
          ORDER BY distance LIMIT ${s.limit}) t
        JOIN kb_passages p ON p.rowid = t.rid AND p.file_id = t.file_id AND p.blob_name = t.blob_name AND p.position = t.position
        ORDER BY t.distance, p.file_id, p.position`.execute(this.db))
    } else {
      // Portable scoring: the dot product of unit vectors in SQL is costly per row, so candidates are first
      // pre-selected by Hamming distance between sign sketches (bit operations), then scored exactly, as on SQLite.
      ;({ rows } = await sql<PassageRecord & { score: number }>`WITH cand AS (
          SELECT v.passage_rid, v.file_id, v.blob_name, v.position, v.vector
          FROM kb_passage_vectors v JOIN files f ON f.id = v.file_id AND f.blob_name = v.blob_name
          WHERE v.bot_id = ${s.botId} AND v.model = ${s.model} AND v.dims = ${unit.length} AND ${visible}
          ORDER BY bit_count(v.signs # ${signBits(unit)}::varbit) LIMIT ${preselect}
        ), top AS (
          SELECT c.passage_rid, c.file_id, c.blob_name, c.position,
            (SELECT sum(a::float8 * b::float8) FROM unnest(c.vector, ${Array.from(unit)}::real[]) AS t(a, b)) AS score
          FROM cand c ORDER BY score DESC LIMIT ${s.limit}
        )
        SELECT top.passage_rid AS rid, p.bot_id, p.file_id, p.blob_name, p.position, p.title, p.content, p.meta, top.score
        FROM top JOIN kb_passages p ON p.rid = top.passage_rid AND p.file_id = top.file_id AND p.blob_name = top.blob_name AND p.position = top.position
        ORDER BY top.score DESC, p.file_id, p.position`.execute(this.db))
    }
    const files = new Map<string, FileRow | undefined>()
    for (const r of rows) if (!files.has(r.file_id)) files.set(r.file_id, await this.files.getFile(s.botId, r.file_id))
    return rows.flatMap((r) => {
      const file = files.get(r.file_id)
      return file
        ? [{ ...toPassage(r), score: Number(r.score), file }]
        : []
    })
  }
}
