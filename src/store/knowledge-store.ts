import type { Page, PageRequest } from './rows.js'
import type { FileRow } from './file-store.js'

/**
 * Knowledge bases and the full-text passage index (issue #7). Every read and write is scoped by bot id.
 * SQLite: FTS5 with the porter tokenizer, ranked by bm25; PostgreSQL: a stored tsvector (english config)
 * ranked by ts_rank. Both expose the same contract (test/contract/knowledge.contract.ts).
 */

export interface KnowledgeBaseRow {
  id: string
  botId: string
  name: string
  tags: Record<string, string>
  createdAt: number
  updatedAt: number
}

export type PassageSubtype = 'title' | 'subtitle' | 'paragraph' | 'blockquote' | 'list' | 'table' | 'code' | 'image' | 'page'

export interface PassageMeta {
  subtype?: PassageSubtype | undefined
  pageNumber?: number | undefined
}

/** A passage as the indexer writes it. `title` (the heading above it) is indexed with a higher weight. */
export interface NewPassage {
  position: number
  title: string
  content: string
  meta: PassageMeta
}

export interface PassageRow extends NewPassage {
  /** `${fileId}:${position}` */
  id: string
  fileId: string
}

export interface PassageHit extends PassageRow {
  /** Higher is better; comparable within one search only. */
  score: number
  file: FileRow
}

/**
 * Which files a search looks at: every one of `all` must match, and when `any` is given at least one of
 * its tag sets must match completely (an OR of ANDs: a list of knowledge bases).
 */
export interface PassageFileFilter {
  all?: Record<string, string> | undefined
  any?: Record<string, string>[] | undefined
}

export interface PassageSearch {
  botId: string
  /** Terms already normalized by the caller (letters and digits only); OR-ed, ranked by relevance. */
  terms: string[]
  /** Terms matched as prefixes (typo tolerance), also OR-ed. */
  prefixes?: string[] | undefined
  files?: PassageFileFilter | undefined
  now: number
  limit: number
}

export interface KnowledgeStore {
  createKnowledgeBase(row: KnowledgeBaseRow): Promise<KnowledgeBaseRow>
  getKnowledgeBase(botId: string, id: string): Promise<KnowledgeBaseRow | undefined>
  updateKnowledgeBase(botId: string, id: string, patch: { name: string; tags: Record<string, string> }, now: number): Promise<KnowledgeBaseRow | undefined>
  deleteKnowledgeBase(botId: string, id: string): Promise<boolean>
  /** Oldest first; `tags` keeps knowledge bases having every given tag. */
  listKnowledgeBases(botId: string, tags: Record<string, string> | undefined, page: PageRequest): Promise<Page<KnowledgeBaseRow>>

  /** Appends passages cut from `blobName` (the indexer writes in batches, then calls completeIndexing). */
  addPassages(botId: string, fileId: string, blobName: string, passages: NewPassage[]): Promise<void>
  /**
   * Replaces every passage of the file by `passages` (cut from `blobName`, its current content) and marks it
   * indexing_completed, in one transaction (setFilePassages, copyFile). False, changing nothing, when the
   * file's content is no longer `blobName` or its upload has not landed.
   */
  setPassages(botId: string, fileId: string, blobName: string, passages: NewPassage[], now: number): Promise<boolean>
  /** Records words of the bot's passages for typo correction (duplicates ignored). */
  addTerms(botId: string, terms: string[]): Promise<void>
  /** Existing vocabulary words among `candidates`, and words starting with `prefix` (at most `limit`). */
  knownTerms(botId: string, candidates: string[]): Promise<Set<string>>
  termsWithPrefix(botId: string, prefix: string, limit: number): Promise<string[]>
  /**
   * Marks the file indexing_completed (or indexing_failed with a reason) if its content is still `blobName`,
   * and drops passages of any other content. False when the file changed or disappeared meanwhile.
   */
  completeIndexing(botId: string, fileId: string, blobName: string, failure: string | null, now: number): Promise<boolean>
  /** Moves a freshly uploaded indexed file to indexing_pending (compare-and-set on its blob). */
  markIndexingPending(botId: string, fileId: string, blobName: string, now: number): Promise<FileRow | undefined>
  /**
   * Claims the indexing of a file's content for `owner` (one instance at a time). Succeeds when nobody holds
   * it, when the holder's claim is older than `staleBefore` (a dead instance), or when it was for other content.
   */
  claimIndexing(fileId: string, blobName: string, owner: string, now: number, staleBefore: number): Promise<boolean>
  releaseIndexing(fileId: string, owner: string): Promise<void>
  /** Files waiting for indexing, every bot (restart recovery), oldest first. */
  listPendingIndexing(limit: number): Promise<FileRow[]>
  /** Every passage of a file (any content version is dropped but the current one), in position order. */
  deleteFilePassages(botId: string, fileId: string): Promise<void>
  /** Every passage of the bot (bot deletion: SQLite's FTS table has no foreign key to cascade). */
  deleteBotPassages(botId: string): Promise<void>
  listFilePassages(botId: string, fileId: string, page: PageRequest): Promise<Page<PassageRow>>
  /** Passages around a position of a file's current content (search context). */
  passagesAround(botId: string, fileId: string, position: number, depth: number): Promise<PassageRow[]>
  searchPassages(search: PassageSearch): Promise<PassageHit[]>
  /**
   * How many of the bot's passages there are, and how many contain each term (stemmed by the engine as
   * in searchPassages; every stored version counted): document frequencies for the ranking's weights.
   * SQLite counts over every bot's passages (its index alone answers fast), zero when the bot has none.
   */
  termFrequencies(botId: string, terms: string[]): Promise<{ total: number; df: Map<string, number> }>
}
