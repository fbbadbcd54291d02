/**
 * File metadata (the Files API). Content lives in a BlobStore; only its random blob name is here.
 * Filled in by the Files API work; kept as its own interface so the Store stays readable.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface FileStore {}
