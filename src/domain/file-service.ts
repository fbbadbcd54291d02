import { randomBytes } from 'node:crypto'
import type { KnowledgeEmbeddings } from './knowledge/embeddings/knowledge-embeddings.js'
import type { Readable } from 'node:stream'
import type { Config } from '../config.js'
import { BlobTooLargeError, type BlobStore } from '../blobs/blob-store.js'
import { ApiError, errors } from '../lib/errors.js'
import { hmacSha256, safeEqual } from '../lib/crypto.js'
import { uuidv7 } from '../lib/ids.js'
import { CONTENT_STATUSES, type AccessPolicy, type FileRow, type FileSortField, type FileStore } from '../store/file-store.js'
import { UniqueViolation, type Json, type JsonObject, type Page, type Store } from '../store/store.js'
import type { Principal } from './auth-service.js'
import { KnowledgeService, type PassageInput } from './knowledge/knowledge-service.js'

export const MAX_KEY_LENGTH = 1024
export const MAX_TAGS = 100
export const MAX_TAG_KEY_LENGTH = 100
export const MAX_TAG_VALUE_LENGTH = 1000
export const MAX_CONTENT_TYPE_LENGTH = 255
export const MAX_EXPIRY_MS = 90 * 24 * 60 * 60 * 1000
export const FILES_PAGE_SIZE = { default: 20, max: 100 }
export const MAX_LIST_IDS = 50
const SIGNING_SECRET_SETTING = 'url-signing-secret'
const PURGE_INTERVAL_MS = 60_000
const PURGE_BATCH = 100

/** C0 and C1 control characters and DEL: never valid in a key or a tag (CR/LF would reach headers). */
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/
/** RFC 6838 type/subtype with optional RFC 9110 parameters; no whitespace except around ';', no CR/LF. */
const MIME_TYPE =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:[ \t]*;[ \t]*[A-Za-z0-9!#$&^_.+-]+=(?:[A-Za-z0-9!#$&^_.+-]+|"[^"\\\u0000-\u001f\u007f]*"))*$/

/** Content types inferred from the key's extension when upsertFile names none. */
const MIME_BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain', text: 'text/plain', log: 'text/plain', md: 'text/markdown', markdown: 'text/markdown', csv: 'text/csv',
  tsv: 'text/tab-separated-values', html: 'text/html', htm: 'text/html', css: 'text/css', xml: 'application/xml',
  js: 'text/javascript', mjs: 'text/javascript', json: 'application/json', jsonl: 'application/jsonl', yaml: 'application/yaml',
  yml: 'application/yaml', pdf: 'application/pdf', rtf: 'application/rtf', zip: 'application/zip', gz: 'application/gzip',
  tar: 'application/x-tar', '7z': 'application/x-7z-compressed', doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', odt: 'application/vnd.oasis.opendocument.text',
  epub: 'application/epub+zip', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  svg: 'image/svg+xml', ico: 'image/vnd.microsoft.icon', bmp: 'image/bmp', tif: 'image/tiff', tiff: 'image/tiff', avif: 'image/avif',
  heic: 'image/heic', mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', oga: 'audio/ogg', m4a: 'audio/mp4', aac: 'audio/aac',
  flac: 'audio/flac', weba: 'audio/webm', mp4: 'video/mp4', m4v: 'video/mp4', webm: 'video/webm', ogv: 'video/ogg', mov: 'video/quicktime',
  avi: 'video/x-msvideo', mkv: 'video/x-matroska', woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf',
  wasm: 'application/wasm', bin: 'application/octet-stream',
}
const DEFAULT_CONTENT_TYPE = 'application/octet-stream'

export function inferContentType(key: string): string {
  const name = key.split(/[\\/]/).pop() ?? ''
  const dot = name.lastIndexOf('.')
  if (dot <= 0 || dot === name.length - 1) return DEFAULT_CONTENT_TYPE
  return MIME_BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? DEFAULT_CONTENT_TYPE
}

export interface UpsertFileInput {
  key: string
  size: number
  tags?: Record<string, string> | undefined
  index?: boolean | undefined
  /** Accepted for compatibility (indexing options of Botpress Cloud); `index: true` is what turns indexing on. */
  indexing?: unknown
  accessPolicies?: AccessPolicy[] | undefined
  contentType?: string | undefined
  expiresAt?: string | undefined
  /** Accepted for compatibility: uploaded content is always served as soon as the upload lands. */
  publicContentImmediatelyAccessible?: boolean | undefined
  /** Any JSON object (the body was parsed from JSON and guarded: depth, keys, strings). */
  metadata?: Record<string, unknown> | undefined
}

export interface UpdateFileInput {
  /** Merged into the existing metadata; a null value removes the key. */
  metadata?: Record<string, unknown> | undefined
  /** Merged into the existing tags; a null value removes the tag. */
  tags?: Record<string, string | null> | undefined
  accessPolicies?: AccessPolicy[] | undefined
  /** null removes the expiry. */
  expiresAt?: string | null | undefined
}

export interface CopyFileInput {
  /** The bot the copy goes to (already authorized, same workspace as the source's). */
  botId: string
  key: string
  /** Replace a file of that key (otherwise 409 AlreadyExists). */
  overwrite?: boolean | undefined
}

export interface ListFilesInput {
  nextToken?: string | undefined
  pageSize?: number | undefined
  sortField?: FileSortField | undefined
  sortDirection?: 'asc' | 'desc' | undefined
  tags?: Record<string, string> | undefined
  ids?: string[] | undefined
  indexed?: boolean | undefined
}

/** Whose upload this is, for the per-user quota: a webchat user's files are the bot's files under `keyPrefix`. */
export interface Uploader { keyPrefix: string }

/** A file with its download URL (signed and expiring, or stable for public_content). */
export type LocatedFile = FileRow & { url: string; indexingProgress?: { passagesIndexed: number; passagesTotal: number } | undefined }

/** Query parameters of a signed download URL. */
export interface DownloadSignature { expires?: string | undefined; signature?: string | undefined }

export interface PageInput { nextToken?: string | undefined; pageSize?: number | undefined }

export interface FileServiceDeps {
  config: Config
  store: Store
  /** The instance's configured blob store (src/compose.ts). */
  blobs: BlobStore
  clock?: () => number
  /** Where failures to delete a no-longer-referenced blob are reported (they only leak disk space). */
  warn?: (context: Record<string, unknown>, message: string) => void
  /** Hybrid knowledge retrieval with an embeddings service (src/compose.ts), when configured. */
  embeddings?: KnowledgeEmbeddings | undefined
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url')

/**
 * The Files API's rules, independent of HTTP. Callers pass the bot they were authorized for;
 * every lookup is scoped by that bot id, so another bot's file is simply "not found" (threats T1).
 *
 * Content flow: upsertFile returns a signed, expiring upload URL bound to (bot, file, upload nonce);
 * the upload streams into a new blob and then swaps the file's blob pointer with a compare-and-set,
 * deleting the previous blob. Re-upserting rotates the nonce, so earlier upload URLs stop working.
 */
export class FileService {
  readonly blobs: BlobStore
  /** Knowledge bases, search and the background indexer of files uploaded with `index: true`. */
  readonly knowledge: KnowledgeService
  private readonly files: FileStore
  private readonly clock: () => number
  private secretPromise: Promise<string> | undefined
  private readonly publicUrl: string
  private lastPurge = 0

  constructor(private readonly deps: FileServiceDeps) {
    this.files = deps.store.files
    this.blobs = deps.blobs
    this.clock = deps.clock ?? Date.now
    this.publicUrl = deps.config.publicUrl
    this.knowledge = new KnowledgeService({ store: deps.store.knowledge, files: this.files, blobs: this.blobs, clock: this.clock, warn: deps.warn, embeddings: deps.embeddings })
  }

  /** BotRemoval's cleaner: a deleted bot's file blobs (listed before its rows go) and knowledge passages. */
  async prepareBotCleanup(botId: string): Promise<() => Promise<void>> {
    const names = await this.files.listBlobNames(botId)
    return async () => {
      for (const name of names) await this.deleteBlob(name, { botId })
      await this.deps.store.knowledge.deleteBotPassages(botId)
    }
  }

  // ---- operations of the Files API ----

  /**
   * `uploader`: the webchat user an upload is for (its files' key prefix), whose per-window quota applies too.
   * The quotas are checked and the upload reserved under the bot's lock, so concurrent upserts cannot overshoot.
   */
  async upsertFile(botId: string, principal: Principal, input: UpsertFileInput, uploader?: Uploader): Promise<LocatedFile & { uploadUrl: string }> {
    const now = this.clock()
    const key = checkKey(input.key)
    if (input.size > this.deps.config.maxFileBytes) {
      throw new ApiError('PayloadTooLarge', `File size ${input.size} exceeds the limit of ${this.deps.config.maxFileBytes} bytes`)
    }
    const tags = checkTags(input.tags ?? {})
    const contentType = input.contentType === undefined ? inferContentType(key) : checkContentType(input.contentType)
    const expiresAt = input.expiresAt === undefined ? null : checkExpiry(input.expiresAt, now)
    await this.purgeExpired(now)
    const existing = await this.files.getFileByKey(botId, key)
    if (existing && this.isExpired(existing, now)) await this.remove(existing)
    const { file } = await this.withQuota(botId, { key, bytes: input.size, now, uploader }, () => this.files.upsertFile({
      id: uuidv7(),
      botId,
      key,
      contentType,
      uploadNonce: randomBytes(16).toString('hex'),
      declaredSize: input.size,
      tags,
      metadata: (input.metadata ?? {}) as JsonObject,
      accessPolicies: uniquePolicies(input.accessPolicies ?? []),
      index: input.index ?? false,
      expiresAt,
      ...ownerOf(principal),
      now,
    }))
    const secret = await this.secret()
    return { ...file, url: this.downloadUrl(secret, file, now), uploadUrl: this.uploadUrl(secret, file, now) }
  }

  async getFile(botId: string, idOrKey: string): Promise<LocatedFile> {
    return this.locate(await this.resolve(botId, idOrKey))
  }

  async listFiles(botId: string, input: ListFilesInput): Promise<Page<LocatedFile>> {
    const now = this.clock()
    if (input.ids && input.ids.length > MAX_LIST_IDS) throw errors.invalidQuery(`ids accepts at most ${MAX_LIST_IDS} ids`)
    const sortField = input.sortField ?? 'createdAt'
    const page = await this.files.listFiles(
      {
        botId,
        now,
        tags: input.tags,
        ids: input.ids,
        indexed: input.indexed,
        sortField,
        sortDirection: input.sortDirection ?? (sortField === 'key' || sortField === 'status' ? 'asc' : 'desc'),
      },
      pageRequest(input),
    )
    const secret = await this.secret()
    return { items: page.items.map((f) => ({ ...f, url: this.downloadUrl(secret, f, now), indexingProgress: this.knowledge.progressOf(f.id) })), next: page.next }
  }

  async updateFileMetadata(botId: string, idOrKey: string, input: UpdateFileInput): Promise<LocatedFile> {
    const now = this.clock()
    const file = await this.resolve(botId, idOrKey)
    const tags = input.tags === undefined ? undefined : checkTagPatch(input.tags, file.tags)
    let metadata: JsonObject | undefined
    if (input.metadata !== undefined) {
      metadata = { ...file.metadata }
      for (const [k, v] of Object.entries(input.metadata)) {
        if (v === null) delete metadata[k]
        else metadata[k] = v as Json
      }
    }
    const expiresAt = input.expiresAt === undefined ? undefined : input.expiresAt === null ? null : checkExpiry(input.expiresAt, now)
    const updated = await this.files.updateFile(
      botId,
      file.id,
      { metadata, tags, expiresAt, accessPolicies: input.accessPolicies && uniquePolicies(input.accessPolicies) },
      now,
    )
    if (!updated) throw errors.notFound('File', idOrKey)
    return this.locate(updated)
  }

  async deleteFile(botId: string, idOrKey: string): Promise<void> {
    const file = await this.resolve(botId, idOrKey)
    if (!(await this.remove(file))) throw errors.notFound('File', idOrKey)
  }

  /**
   * Copies a file with content (bytes, content type, tags, metadata, access policies, index flag; not the
   * expiry) to `to.key` of `to.botId`. The bytes go through the BlobStore into a new blob; the copy keeps
   * the source's passages, or is indexed like an upload. With `overwrite`, the file holding the key is
   * replaced (a new id); a bot API key may only replace files its bot created.
   */
  async copyFile(principal: Principal, botId: string, idOrKey: string, to: CopyFileInput): Promise<LocatedFile> {
    const now = this.clock()
    const source = await this.resolve(botId, idOrKey)
    const key = checkKey(to.key)
    if (!HAS_CONTENT.has(source.status) || !source.blobName) {
      throw errors.invalidPayload(`The file's upload has not landed (status ${source.status}): there is no content to copy`)
    }
    await this.purgeExpired(now)
    let existing = await this.files.getFileByKey(to.botId, key)
    if (existing && this.isExpired(existing, now)) {
      await this.remove(existing)
      existing = undefined
    }
    if (existing) {
      if (existing.id === source.id) throw errors.invalidPayload('A file cannot be copied onto itself')
      if (!to.overwrite) throw errors.alreadyExists('File', key)
      if (principal.kind === 'bot' && (existing.ownerType !== 'bot' || existing.ownerId !== principal.botId)) {
        throw errors.forbidden('A bot API key may only overwrite files that its bot created')
      }
    }
    const created = await this.withQuota(to.botId, { key, bytes: source.size ?? 0, now }, async () => {
      const blob = await this.blobs.copy(source.blobName!)
      if (!blob) throw errors.notFound('File content', idOrKey)
      try {
        return await this.files.createStoredFile({
          id: uuidv7(), botId: to.botId, key, contentType: source.contentType, uploadNonce: randomBytes(16).toString('hex'), declaredSize: blob.size,
          tags: source.tags, metadata: source.metadata, accessPolicies: source.accessPolicies, index: source.index, expiresAt: null,
          ...ownerOf(principal), now: this.clock(), blobName: blob.name, size: blob.size,
        }, existing?.id)
      } catch (err) {
        await this.deleteBlob(blob.name, { fileId: source.id })
        // The key was taken meanwhile (a concurrent upsert or copy).
        if (err instanceof UniqueViolation) throw errors.alreadyExists('File', key)
        throw err
      }
    })
    if (created.replaced) await this.discard(created.replaced)
    return this.locate(await this.knowledge.copied(source, created.file))
  }

  /** Replaces the passages of a file with content (setFilePassages); it becomes indexing_completed. */
  async setFilePassages(botId: string, idOrKey: string, passages: PassageInput[]): Promise<void> {
    await this.knowledge.setFilePassages(await this.resolve(botId, idOrKey), passages)
  }

  /** Distinct tag names of the bot's files (expired files left out), in byte order. */
  listFileTags(botId: string, input: PageInput): Promise<Page<string>> {
    return this.files.listTagNames(botId, this.clock(), pageRequest(input))
  }

  /** Distinct values of one tag over the bot's files, in byte order. */
  listFileTagValues(botId: string, tag: string, input: PageInput): Promise<Page<string>> {
    return this.files.listTagValues(botId, tag, this.clock(), pageRequest(input))
  }

  // ---- files the server writes and reads itself (Tables API jobs) ----

  /** A file of the bot created with its content at once, owned by the bot (table exports). */
  async writeFile(botId: string, input: { key: string; contentType: string; tags?: Record<string, string> }, content: Buffer): Promise<LocatedFile> {
    const created = await this.upsertFile(botId, { kind: 'bot', botId, keyId: 'tables' }, { ...input, size: content.length })
    const token = created.uploadUrl.slice(created.uploadUrl.lastIndexOf('/') + 1)
    await this.receiveUpload(token, content.length, (async function* () { yield content })())
    return this.getFile(botId, created.id)
  }

  /** The content of a bot's file by id or key (404 without content; 413 above `maxBytes`). */
  async readFile(botId: string, idOrKey: string, maxBytes: number): Promise<{ file: FileRow; content: Buffer }> {
    const file = await this.resolve(botId, idOrKey)
    if (!HAS_CONTENT.has(file.status) || !file.blobName) throw errors.notFound('File content', idOrKey)
    if ((file.size ?? 0) > maxBytes) throw new ApiError('PayloadTooLarge', `File "${idOrKey}" is ${file.size} bytes, above the limit of ${maxBytes}`)
    const blob = await this.blobs.get(file.blobName)
    if (!blob) throw errors.notFound('File content', idOrKey)
    const chunks: Buffer[] = []
    for await (const chunk of blob.stream) chunks.push(chunk as Buffer)
    return { file, content: Buffer.concat(chunks) }
  }

  // ---- signed URLs: upload and download ----

  /**
   * Receives the content sent to an upload URL, once: the URL is spent when an upload lands (410 after). The limit
   * (the declared size, the webchat bot's limit, maxFileBytes) is checked against Content-Length first, then while
   * streaming; on 413 or any failure the file keeps its previous state, no blob is left and the URL still works.
   */
  async receiveUpload(token: string, contentLength: number | undefined, body: AsyncIterable<Uint8Array>): Promise<FileRow> {
    const now = this.clock()
    const claims = this.verifyUploadToken(await this.secret(), token, now)
    const file = await this.files.getFile(claims.botId, claims.fileId)
    if (!file || this.isExpired(file, now)) throw errors.notFound('File', claims.fileId)
    if (file.uploadNonce !== claims.nonce) throw superseded()
    if (file.status !== 'upload_pending') throw alreadyUsed()
    const limit = this.uploadLimit(file)
    if (contentLength !== undefined && contentLength > limit.bytes) throw limit.error()
    let blob: { name: string; size: number }
    try {
      blob = await this.blobs.put(body, { maxBytes: limit.bytes })
    } catch (err) {
      if (err instanceof BlobTooLargeError) throw limit.error()
      throw err
    }
    // Compare-and-set on (nonce, still pending, previous blob): of concurrent uploads to the same URL, the first to
    // land wins; the others find the URL spent (or superseded, or the file gone) and leave no blob behind.
    const done = await this.files.completeUpload({
      botId: file.botId, id: file.id, uploadNonce: claims.nonce, expectedBlobName: file.blobName,
      blobName: blob.name, size: blob.size, now: this.clock(),
    })
    if (done) {
      if (file.blobName) await this.deleteBlob(file.blobName, { fileId: file.id })
      return this.knowledge.uploaded(done)
    }
    await this.deleteBlob(blob.name, { fileId: claims.fileId })
    const current = await this.files.getFile(claims.botId, claims.fileId)
    if (!current) throw errors.notFound('File', claims.fileId)
    throw current.uploadNonce === claims.nonce ? alreadyUsed() : superseded()
  }

  /** The most an upload to `file` may send: its declared size, a webchat bot's own limit, maxFileBytes; and its 413. */
  private uploadLimit(file: FileRow): { bytes: number; error: () => ApiError } {
    const max = this.deps.config.maxFileBytes
    // A webchat user's upload carries its bot's limit (WebchatUploadService).
    const own = file.metadata.webchatMaxBytes
    const bytes = Math.min(max, typeof own === 'number' && own > 0 ? own : max, file.declaredSize ?? max)
    if (file.declaredSize === bytes) {
      return { bytes, error: () => new ApiError('PayloadTooLarge', `The upload exceeds its declared size of ${bytes} bytes (upsertFile's size); upsert again with the right size`) }
    }
    return { bytes, error: () => errors.payloadTooLarge(bytes) }
  }

  /**
   * Runs `write` (which stores up to `bytes` more under `key`) under the bot's upload lock, after checking the quotas
   * (config.uploadQuota): the bot's stored and reserved bytes (403 QuotaExceeded), and the webchat user's files and
   * bytes of the window (429 RateLimited).
   */
  private async withQuota<T>(botId: string, upload: { key: string; bytes: number; now: number; uploader?: Uploader | undefined }, write: () => Promise<T>): Promise<T> {
    const quota = this.deps.config.uploadQuota
    if (quota.botBytes === 0 && (!upload.uploader || (quota.userFiles === 0 && quota.userBytes === 0))) return write()
    return this.deps.store.withLock(`files:quota:${botId}`, async () => {
      if (quota.botBytes > 0) {
        const used = await this.files.storedBytes(botId, upload.now - this.deps.config.signedUrlTtlSeconds * 1000, upload.key)
        if (used + upload.bytes > quota.botBytes) {
          throw new ApiError('QuotaExceeded', `The bot's files may hold ${quota.botBytes} bytes; ${used} are stored or reserved by pending uploads, and this upload declares ${upload.bytes}`)
        }
      }
      if (upload.uploader && (quota.userFiles > 0 || quota.userBytes > 0)) {
        const window = quota.windowSeconds
        const recent = await this.files.createdSince(botId, upload.uploader.keyPrefix, upload.now - window * 1000)
        // Retry-After: when the window's oldest upload leaves it (an upper bound: a large one may need more to leave).
        const retryAfterSeconds = Math.max(1, Math.ceil(((recent.oldest ?? upload.now) + window * 1000 - upload.now) / 1000))
        if (quota.userFiles > 0 && recent.files + 1 > quota.userFiles) {
          throw errors.rateLimited(`This user may upload ${quota.userFiles} files per ${window} s; retry in ${retryAfterSeconds} s`, retryAfterSeconds)
        }
        if (quota.userBytes > 0 && recent.bytes + upload.bytes > quota.userBytes) {
          throw errors.rateLimited(`This user may upload ${quota.userBytes} bytes per ${window} s (${recent.bytes} used, this upload declares ${upload.bytes}); retry in ${retryAfterSeconds} s or later`, retryAfterSeconds)
        }
      }
      return write()
    })
  }

  /**
   * Content behind a download URL: public_content files need no signature; other files need a
   * valid, unexpired signature for this exact (bot, file). Pending, expired and unknown files are 404.
   */
  async openContent(botId: string, fileId: string, query: DownloadSignature): Promise<{ file: FileRow; stream: Readable; size: number }> {
    const now = this.clock()
    const signed = query.signature !== undefined || query.expires !== undefined
    if (signed) this.verifyDownloadSignature(await this.secret(), botId, fileId, query, now)
    const file = await this.files.getFile(botId, fileId)
    if (!file || this.isExpired(file, now) || (!signed && !file.accessPolicies.includes('public_content'))) {
      throw errors.notFound('File', fileId)
    }
    if (!HAS_CONTENT.has(file.status) || !file.blobName) throw errors.notFound('File content', fileId)
    const blob = await this.blobs.get(file.blobName)
    if (!blob) throw errors.notFound('File content', fileId)
    return { file, stream: blob.stream, size: blob.size }
  }

  /** Deletes expired files and their blobs, at most once a minute and one batch at a time. */
  async purgeExpired(now = this.clock()): Promise<number> {
    if (now - this.lastPurge < PURGE_INTERVAL_MS) return 0
    this.lastPurge = now
    let removed = 0
    for (const file of await this.files.listExpired(now, PURGE_BATCH)) {
      if (await this.remove(file)) removed++
    }
    return removed
  }

  // ---- internals ----

  private secret(): Promise<string> {
    if (!this.secretPromise) {
      const pending = this.deps.store.getOrCreateSetting(SIGNING_SECRET_SETTING, () => randomBytes(32).toString('base64url'))
      // A failed read (database down) is retried by the next call rather than cached.
      pending.catch(() => {
        if (this.secretPromise === pending) this.secretPromise = undefined
      })
      this.secretPromise = pending
    }
    return this.secretPromise
  }

  private mac(secret: string, parts: (string | number)[]): string {
    return hmacSha256(secret, JSON.stringify(parts)).toString('base64url')
  }

  private expiry(now: number): number {
    return Math.floor(now / 1000) + this.deps.config.signedUrlTtlSeconds
  }

  /** `/v1/files/uploads/{payload}.{mac}`, payload = base64url JSON [botId, fileId, nonce, expires]. */
  private uploadUrl(secret: string, file: FileRow, now: number): string {
    const payload = b64url(JSON.stringify([file.botId, file.id, file.uploadNonce, this.expiry(now)]))
    return `${this.publicUrl}/v1/files/uploads/${payload}.${this.mac(secret, ['upload', payload])}`
  }

  private verifyUploadToken(secret: string, token: string, now: number): { botId: string; fileId: string; nonce: string } {
    const invalid = () => errors.forbidden('Invalid upload URL signature')
    if (token.length > 1024) throw invalid()
    const [payload, mac, extra] = token.split('.')
    if (!payload || !mac || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(payload)) throw invalid()
    if (!safeEqual(mac, this.mac(secret, ['upload', payload]))) throw invalid()
    const parts = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown
    if (!Array.isArray(parts) || parts.length !== 4) throw invalid()
    const [botId, fileId, nonce, expires] = parts as unknown[]
    if (typeof botId !== 'string' || typeof fileId !== 'string' || typeof nonce !== 'string' || !Number.isSafeInteger(expires)) throw invalid()
    if ((expires as number) * 1000 < now) throw errors.forbidden('This upload URL has expired; call upsertFile again for a new one')
    return { botId, fileId, nonce }
  }

  /** Stable for public_content files; otherwise signed with an expiry. */
  private downloadUrl(secret: string, file: FileRow, now: number): string {
    const base = `${this.publicUrl}/v1/files/content/${encodeURIComponent(file.botId)}/${encodeURIComponent(file.id)}`
    if (file.accessPolicies.includes('public_content')) return base
    const expires = this.expiry(now)
    return `${base}?expires=${expires}&signature=${this.mac(secret, ['download', file.botId, file.id, expires])}`
  }

  private verifyDownloadSignature(secret: string, botId: string, fileId: string, query: DownloadSignature, now: number): void {
    const expires = Number(query.expires)
    if (!query.signature || !query.expires || !/^\d{1,15}$/.test(query.expires)) throw errors.forbidden('Invalid download URL signature')
    if (!safeEqual(query.signature, this.mac(secret, ['download', botId, fileId, expires]))) throw errors.forbidden('Invalid download URL signature')
    if (expires * 1000 < now) throw errors.forbidden('This download URL has expired; get the file again for a fresh URL')
  }

  private async locate(file: FileRow): Promise<LocatedFile> {
    return { ...file, url: this.downloadUrl(await this.secret(), file, this.clock()), indexingProgress: this.knowledge.progressOf(file.id) }
  }

  private isExpired(file: FileRow, now: number): boolean {
    return file.expiresAt !== null && file.expiresAt <= now
  }

  /** A live file of this bot by id, else by key. Expired files are deleted on sight and are 404. */
  private async resolve(botId: string, idOrKey: string): Promise<FileRow> {
    const file = (await this.files.getFile(botId, idOrKey)) ?? (await this.files.getFileByKey(botId, idOrKey))
    if (!file) throw errors.notFound('File', idOrKey)
    if (this.isExpired(file, this.clock())) {
      await this.remove(file)
      throw errors.notFound('File', idOrKey)
    }
    return file
  }

  /** Row first, then blob: a crash in between leaks a blob, never a row pointing at nothing. */
  private async remove(file: FileRow): Promise<boolean> {
    const deleted = await this.files.deleteFile(file.botId, file.id)
    if (deleted) await this.discard(deleted)
    return deleted !== undefined
  }

  /** Passages and blob of a file whose row was deleted. */
  private async discard(deleted: FileRow): Promise<void> {
    await this.knowledge.removed(deleted)
    if (deleted.blobName) await this.deleteBlob(deleted.blobName, { fileId: deleted.id })
  }

  private async deleteBlob(name: string, context: Record<string, unknown>): Promise<void> {
    try {
      await this.blobs.delete(name)
    } catch (err) {
      this.deps.warn?.({ ...context, blob: name, err }, 'could not delete a file blob')
    }
  }
}

const HAS_CONTENT = new Set(CONTENT_STATUSES)

const ownerOf = (principal: Principal): { ownerType: 'bot' | 'user'; ownerId: string } =>
  principal.kind === 'account' ? { ownerType: 'user', ownerId: principal.account.id } : { ownerType: 'bot', ownerId: principal.kind === 'bot' ? principal.botId : principal.definitionId }

const pageRequest = (input: PageInput) => ({ after: input.nextToken, limit: Math.min(input.pageSize ?? FILES_PAGE_SIZE.default, FILES_PAGE_SIZE.max) })

const superseded = () => errors.forbidden('This upload URL was superseded by a later upsertFile of the same key')
const alreadyUsed = () => new ApiError('ResourceGone', 'This upload URL was already used (an upload URL works once); call upsertFile again for a new one')

function checkKey(key: string): string {
  if (key.length === 0 || [...key].length > MAX_KEY_LENGTH) throw errors.invalidPayload(`key must be 1 to ${MAX_KEY_LENGTH} characters`)
  if (CONTROL_CHARS.test(key)) throw errors.invalidPayload('key must not contain control characters (NUL, CR, LF, …)')
  if (!key.isWellFormed()) throw errors.invalidPayload('key must be well-formed Unicode')
  return key
}

function checkTagKey(key: string): void {
  if (key.length === 0 || key.length > MAX_TAG_KEY_LENGTH || CONTROL_CHARS.test(key)) {
    throw errors.invalidPayload(`Tag names must be 1 to ${MAX_TAG_KEY_LENGTH} characters without control characters`)
  }
}

function checkTagValue(key: string, value: string): void {
  if (value.length > MAX_TAG_VALUE_LENGTH || CONTROL_CHARS.test(value)) {
    throw errors.invalidPayload(`Tag "${key}" must be at most ${MAX_TAG_VALUE_LENGTH} characters without control characters`)
  }
}

function checkTags(tags: Record<string, string>): Record<string, string> {
  const entries = Object.entries(tags)
  if (entries.length > MAX_TAGS) throw errors.invalidPayload(`A file has at most ${MAX_TAGS} tags`)
  for (const [k, v] of entries) {
    checkTagKey(k)
    checkTagValue(k, v)
  }
  return Object.fromEntries(entries)
}

function checkTagPatch(patch: Record<string, string | null>, current: Record<string, string>): Record<string, string | null> {
  const result = { ...current } as Record<string, string | null>
  for (const [k, v] of Object.entries(patch)) {
    checkTagKey(k)
    if (v !== null) checkTagValue(k, v)
    result[k] = v
  }
  if (Object.values(result).filter((v) => v !== null).length > MAX_TAGS) throw errors.invalidPayload(`A file has at most ${MAX_TAGS} tags`)
  return patch
}

/** A MIME type a file may declare (and Parley serves as is): RFC 6838 type/subtype, RFC 9110 parameters, at most 255 characters. */
export function isMimeType(value: string): boolean {
  return value.length <= MAX_CONTENT_TYPE_LENGTH && MIME_TYPE.test(value)
}

function checkContentType(value: string): string {
  if (!isMimeType(value)) {
    throw errors.invalidPayload('contentType must be a valid MIME type such as "image/png" or "text/plain; charset=utf-8"')
  }
  return value
}

/** ISO date, in the future, at most 90 days away; as in Botpress, seconds and milliseconds are ignored. */
function checkExpiry(value: string, now: number): number {
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) throw errors.invalidPayload('expiresAt must be an ISO 8601 date-time')
  const minute = Math.floor(ms / 60_000) * 60_000
  if (minute <= now) throw errors.invalidPayload('expiresAt must be in the future (at minute precision)')
  if (minute > now + MAX_EXPIRY_MS) throw errors.invalidPayload('expiresAt must be at most 90 days from now')
  return minute
}

function uniquePolicies(policies: AccessPolicy[]): AccessPolicy[] {
  return [...new Set(policies)]
}
