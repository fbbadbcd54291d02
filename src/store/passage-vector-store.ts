import type { PassageFileFilter, PassageHit } from './knowledge-store.js'

/**
 * Embedding vectors of knowledge passages (hybrid retrieval, issue #17), keyed by passage and model name.
 * Only the configured model's vectors count: a model change leaves the old ones ignored (and collected) while
 * the backfill embeds every passage again. SQLite scores with sqlite-vec (a JS function when it cannot load);
 * PostgreSQL stores real[] and scores in SQL, after a Hamming pre-selection on sign bits. Contract:
 * test/contract/passage-vectors.contract.ts.
 */

/** A passage of a finished file that has no vector for the model yet. */
export interface PendingPassage {
  /** The engine's row id of the passage (with file, blob and position, what a vector is bound to). */
  rid: number
  botId: string
  fileId: string
  blobName: string
  position: number
  title: string
  content: string
}

/** A file of which some passages have no vector for the model. */
export interface PendingFile {
  botId: string
  fileId: string
  blobName: string
}

export interface NewVector {
  passage: PendingPassage
  /** Any length ≥ 1 (normalized by the store); `null` marks a passage the service refused (not asked again). */
  vector: Float32Array | null
}

export interface VectorSearch {
  botId: string
  model: string
  /** The query's embedding (same model); only vectors of its length are compared. */
  vector: Float32Array
  files?: PassageFileFilter | undefined
  now: number
  limit: number
}

/** Which scoring a store uses, for the startup log. */
export interface VectorEngine {
  name: 'sqlite-vec' | 'sqlite-js' | 'postgres-portable'
  /** Why the faster path is not in use, when it is not. */
  note?: string | undefined
}

export interface PassageVectorStore {
  readonly engine: VectorEngine
  /** Files whose current content has passages without a vector for `model` (finished, unexpired files only). */
  filesPending(model: string, now: number, limit: number): Promise<PendingFile[]>
  /** Passages of the file's content `blobName` without a vector for `model`, in position order. */
  pendingPassages(file: PendingFile, model: string, limit: number): Promise<PendingPassage[]>
  /**
   * Stores vectors, each only if its passage still holds the text it was computed from (compare-and-set on
   * row id, file, blob, position, title and content). Returns how many were stored.
   */
  putVectors(model: string, vectors: NewVector[]): Promise<number>
  /** Drops every vector of a file (its passages were replaced). */
  forgetFile(fileId: string): Promise<void>
  /** Nearest passages by cosine similarity (score in [-1, 1], higher is better), under the lexical search's visibility rules. */
  nearest(search: VectorSearch): Promise<PassageHit[]>
  /**
   * The stored vectors (unit length) of these passages for `model`, by passage id (`${fileId}:${position}`), for those
   * that have one still bound to the passage's current content (`blobName`); `null` for a passage the service refused;
   * no entry for a passage not embedded yet.
   */
  vectorsOf(model: string, passages: { fileId: string; blobName: string; position: number }[]): Promise<Map<string, Float32Array | null>>
  /** Which of these passages the backfill is done with for `model` (a vector, or refused), by passage id; vectorsOf without the vectors. */
  embeddedOf(model: string, passages: { fileId: string; blobName: string; position: number }[]): Promise<Set<string>>
  /** Whether the bot has any vector of `model` (the cheap check before asking the service to embed a query). */
  hasVectors(botId: string, model: string): Promise<boolean>
  /** Lengths of the model's stored vectors (several after the service changed its answers under one name). */
  dimsOf(model: string): Promise<number[]>
  /** Drops vectors of `model` whose length is not `dims`. */
  dropOtherDims(model: string, dims: number): Promise<number>
  /** Drops vectors of other models and vectors whose passage is gone; at most `limit` rows per call. */
  collectGarbage(model: string, limit: number): Promise<number>
  /** Backfill claims on a file, taken over when older than `staleBefore` (several instances share PostgreSQL). */
  claim(fileId: string, owner: string, now: number, staleBefore: number): Promise<boolean>
  release(fileId: string, owner: string): Promise<void>
}
