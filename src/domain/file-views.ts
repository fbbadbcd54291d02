import type { AccessPolicy, FileOwnerType, FileStatus } from '../store/file-store.js'
import type { JsonObject } from '../store/store.js'
import type { LocatedFile } from './file-service.js'

/**
 * File row → wire object (wire-compat §2.5), shared by every Files API operation so that what
 * upsert, get, list and update return is the same object.
 */
const iso = (ms: number) => new Date(ms).toISOString()

export interface FileView {
  id: string
  botId: string
  key: string
  url: string
  size: number | null
  contentType: string
  tags: Record<string, string>
  metadata: JsonObject
  createdAt: string
  updatedAt: string
  accessPolicies: AccessPolicy[]
  index: boolean
  status: FileStatus
  failedStatusReason?: string
  expiresAt?: string
  owner: { type: FileOwnerType; id?: string }
  /** Parley extension: passages written so far while this instance indexes the file. */
  indexingProgress?: { passagesIndexed: number; passagesTotal: number }
}

export function fileView(f: LocatedFile): FileView {
  return {
    id: f.id,
    botId: f.botId,
    key: f.key,
    url: f.url,
    size: f.size,
    contentType: f.contentType,
    tags: f.tags,
    metadata: f.metadata,
    createdAt: iso(f.createdAt),
    updatedAt: iso(f.updatedAt),
    accessPolicies: f.accessPolicies,
    index: f.index,
    status: f.status,
    ...(f.failedStatusReason !== null && { failedStatusReason: f.failedStatusReason }),
    ...(f.expiresAt !== null && { expiresAt: iso(f.expiresAt) }),
    owner: { type: f.ownerType, ...(f.ownerId !== null && { id: f.ownerId }) },
    ...(f.indexingProgress && f.status === 'indexing_pending' && { indexingProgress: f.indexingProgress }),
  }
}

export function uploadableFileView(f: LocatedFile & { uploadUrl: string }): FileView & { uploadUrl: string } {
  return { ...fileView(f), uploadUrl: f.uploadUrl }
}
