import type { JsonObject, Page, PageRequest } from './rows.js'

/**
 * File metadata (the Files API). Content lives in a BlobStore; only its random blob name is here.
 * Every read and write is scoped by (botId, fileId) or (botId, key): a bot never reaches another
 * bot's rows through this interface (threats T1).
 */

export const FILE_STATUSES = ['upload_pending', 'upload_failed', 'upload_completed', 'indexing_pending', 'indexing_failed', 'indexing_completed'] as const
export type FileStatus = (typeof FILE_STATUSES)[number]
/** Statuses of a file whose upload landed (indexing comes after the upload). */
export const CONTENT_STATUSES: readonly FileStatus[] = ['upload_completed', 'indexing_pending', 'indexing_completed', 'indexing_failed']

export const ACCESS_POLICIES = ['integrations', 'public_content'] as const
export type AccessPolicy = (typeof ACCESS_POLICIES)[number]

export type FileOwnerType = 'bot' | 'user' | 'integration'

export interface FileRow {
  id: string
  botId: string
  key: string
  contentType: string
  /** Bytes of the current content; null until an upload lands (and again after a re-upsert). */
  size: number | null
  /** The size upsertFile declared: the upload may not exceed it (null on files from before it was kept). */
  declaredSize: number | null
  status: FileStatus
  failedStatusReason: string | null
  /** Name of the current content in the BlobStore; null before the first upload. */
  blobName: string | null
  /** Rotated by every upsert; upload URLs carry it, so a superseded URL no longer matches. */
  uploadNonce: string
  tags: Record<string, string>
  metadata: JsonObject
  accessPolicies: AccessPolicy[]
  index: boolean
  expiresAt: number | null
  ownerType: FileOwnerType
  ownerId: string | null
  createdAt: number
  updatedAt: number
}

/** What an upsert writes. On an existing (botId, key) the row keeps its id, createdAt, owner and blob. */
export interface NewFile {
  id: string
  botId: string
  key: string
  contentType: string
  uploadNonce: string
  /** The size the upload may have (upsertFile's `size`); none: no bound but maxFileBytes. */
  declaredSize?: number | undefined
  tags: Record<string, string>
  metadata: JsonObject
  accessPolicies: AccessPolicy[]
  index: boolean
  expiresAt: number | null
  ownerType: FileOwnerType
  ownerId: string | null
  now: number
}

/** A tag value is up to 1000 characters: the tag listings' cursors are longer than the usual 512. */
export const TAG_CURSOR_MAX = 4096

/** A file whose content is already stored (copyFile): it is created upload_completed. */
export interface NewStoredFile extends NewFile {
  blobName: string
  size: number
}

export interface FilePatch {
  /** Replaces the whole metadata object (the domain merges). */
  metadata?: JsonObject | undefined
  /** null removes the tag. */
  tags?: Record<string, string | null> | undefined
  accessPolicies?: AccessPolicy[] | undefined
  /** null removes the expiry. */
  expiresAt?: number | null | undefined
}

export const FILE_SORT_FIELDS = ['key', 'size', 'createdAt', 'updatedAt', 'status'] as const
export type FileSortField = (typeof FILE_SORT_FIELDS)[number]

export interface FileListFilter {
  botId: string
  /** Files whose expiresAt is at or before this instant are left out. */
  now: number
  tags?: Record<string, string> | undefined
  ids?: string[] | undefined
  indexed?: boolean | undefined
  sortField: FileSortField
  sortDirection: 'asc' | 'desc'
}

export interface CompleteUpload {
  botId: string
  id: string
  /** The upload URL's nonce: the write only happens while it is still the file's current nonce. */
  uploadNonce: string
  /** The blob the caller saw; the write only happens if it is still the current one (compare-and-set). */
  expectedBlobName: string | null
  blobName: string
  size: number
  now: number
}

export interface FileStore {
  /** Creates the file, or resets the bot's file with this key for a new upload (status upload_pending, size null). */
  upsertFile(file: NewFile): Promise<{ file: FileRow; created: boolean }>
  getFile(botId: string, id: string): Promise<FileRow | undefined>
  getFileByKey(botId: string, key: string): Promise<FileRow | undefined>
  listFiles(filter: FileListFilter, page: PageRequest): Promise<Page<FileRow>>
  updateFile(botId: string, id: string, patch: FilePatch, now: number): Promise<FileRow | undefined>
  /** Deletes the row (and its tags); returns it so that the caller can delete its blob. */
  deleteFile(botId: string, id: string): Promise<FileRow | undefined>
  /**
   * Points the file at newly uploaded content; undefined when the nonce or the expected blob no longer match, or when
   * an upload already landed for this nonce (the file is no longer upload_pending: an upload URL works once).
   */
  completeUpload(upload: CompleteUpload): Promise<FileRow | undefined>
  /**
   * Bytes the bot's files hold or have reserved: each landed file's size, and the declared size of each upload still
   * pending whose URL was issued after `pendingSince` (an expired URL reserves nothing). The file `exceptKey` is left
   * out (an upsert of that key replaces it).
   */
  storedBytes(botId: string, pendingSince: number, exceptKey?: string): Promise<number>
  /** The bot's files whose key starts with `keyPrefix`, created after `since`: how many, and their bytes (size, else declared). */
  createdSince(botId: string, keyPrefix: string, since: number): Promise<{ files: number; bytes: number; oldest: number | null }>
  /**
   * Creates a file whose content is already stored (status upload_completed). In one transaction, the
   * bot's file `replaceId` is deleted first (overwrite) and returned so that the caller can drop its blob
   * and passages. Throws UniqueViolation, changing nothing, when the key is (still) taken.
   */
  createStoredFile(file: NewStoredFile, replaceId?: string): Promise<{ file: FileRow; replaced: FileRow | undefined }>
  /** Distinct tag names of the bot's live (unexpired) files, in byte order. */
  listTagNames(botId: string, now: number, page: PageRequest): Promise<Page<string>>
  /** Distinct values of one tag over the bot's live files, in byte order. */
  listTagValues(botId: string, tag: string, now: number, page: PageRequest): Promise<Page<string>>
  /** Every blob the bot's files reference (bot deletion). */
  listBlobNames(botId: string): Promise<string[]>
  /** Files whose expiresAt is at or before `now`, oldest expiry first. */
  listExpired(now: number, limit: number): Promise<FileRow[]>
}
