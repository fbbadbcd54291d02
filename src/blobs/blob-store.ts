import type { Readable } from 'node:stream'

/**
 * Where file content lives. Blobs are immutable and named by the store itself (random names):
 * callers keep the name in the database and never choose it, so no user string ever becomes
 * a path or an object key (threats T5).
 */
export interface BlobStore {
  /**
   * Streams `source` into a new blob. Atomic: the blob exists only once every byte is durably
   * written; on any failure (including the limit) nothing is left behind.
   * Throws BlobTooLargeError as soon as more than `maxBytes` bytes have been read.
   */
  put(source: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<{ name: string; size: number }>
  /** The blob's bytes as a stream, or undefined when there is no such blob. */
  get(name: string): Promise<{ stream: Readable; size: number } | undefined>
  /**
   * A new blob with the same bytes as `name` (copyFile), as atomic as put; undefined when there is no such
   * blob. The source may be deleted meanwhile: the copy is then complete or absent, never partial.
   */
  copy(name: string): Promise<{ name: string; size: number } | undefined>
  /** True if the blob existed. */
  delete(name: string): Promise<boolean>
  exists(name: string): Promise<boolean>
  /** Releases connections, if the store has any (called on shutdown, after the HTTP server closed). */
  close?(): Promise<void>
}

export class BlobTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Content exceeds the limit of ${limit} bytes`)
    this.name = 'BlobTooLargeError'
  }
}

/** A name the store did not produce (a bug or tampering): refused before touching storage. */
export class InvalidBlobNameError extends Error {
  constructor() {
    super('Invalid blob name')
    this.name = 'InvalidBlobNameError'
  }
}
