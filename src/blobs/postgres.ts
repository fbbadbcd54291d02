import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import pg from 'pg'
import { parleyTypeParsers } from '../store/postgres.js'
import { BlobTooLargeError, InvalidBlobNameError, type BlobStore } from './blob-store.js'

/** The only names this store produces and accepts: 128 random bits in lowercase hex (as LocalBlobStore). */
const BLOB_NAME = /^[0-9a-f]{32}$/
/** Content is cut into rows of this size: large enough for few round trips, small enough to bound memory. */
export const BLOB_CHUNK_BYTES = 256 * 1024

export interface PostgresBlobOptions {
  url: string
  /** Connections of the blob pool: concurrent uploads and downloads of this instance (default 4). */
  poolSize?: number | undefined
  /** How long a transfer waits for a free blob connection before failing with 503 (default 10 s). */
  connectionTimeoutMs?: number | undefined
  onPoolError?: ((err: Error) => void) | undefined
}

/**
 * A pool client checked out for a transfer, with an 'error' listener for its whole checkout: the pool
 * only listens on idle clients, and a connection lost while a transfer waits on its HTTP client (no
 * query in flight) would otherwise be an uncaught exception. The next query then fails instead.
 * A client released broken keeps the listener: a terminated backend's connection emits more than one
 * error (the FATAL message, then the socket's end), and the pool destroys that client without listening.
 */
export async function checkout(pool: Pick<pg.Pool, 'connect'>): Promise<{ client: pg.PoolClient; release: (err?: Error) => void }> {
  const client = await pool.connect()
  let lost: Error | undefined
  const onError = (err: Error) => {
    lost = err
  }
  client.on('error', onError)
  let released = false
  return {
    client,
    release: (err) => {
      if (released) return
      released = true
      const broken = err ?? lost
      if (broken === undefined) client.off('error', onError)
      client.release(broken)
    },
  }
}

function checkName(name: string): void {
  if (typeof name !== 'string' || !BLOB_NAME.test(name)) throw new InvalidBlobNameError()
}

/**
 * Blobs in PostgreSQL (tables `blobs` and `blob_chunks`, migrations/postgres/0003_blobs.sql), shared by
 * every instance on the database.
 * - put: one transaction holding the head row and 256 KiB chunks, written as the source is read (the
 *   connection is taken once the first chunk is full, or at the end); it commits only after the last byte, so an error, the size limit, a lost connection or a crash
 *   leaves nothing (PostgreSQL rolls back) and no instance ever sees a partial blob.
 * - get: a REPEATABLE READ snapshot streams the chunks one at a time (bounded memory), so a reader
 *   keeps a consistent blob even if it is deleted meanwhile, as an open file survives unlink.
 * Transfers use their own small pool, not the store's: a slow upload or download holds a
 * connection for its whole duration and must not starve chat requests.
 */
export class PostgresBlobStore implements BlobStore {
  constructor(readonly pool: pg.Pool) {}

  async put(source: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<{ name: string; size: number }> {
    const name = randomBytes(16).toString('hex')
    // The connection is taken when the first full chunk is ready (or at the end): a small upload
    // from a slow client holds none while its bytes trickle in.
    let tx: Awaited<ReturnType<typeof checkout>> | undefined
    let broken: Error | undefined
    // Bytes are copied out of the source's chunks (a source may reuse its buffers) into one chunk buffer.
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(BLOB_CHUNK_BYTES, options.maxBytes)))
    let buffered = 0
    let index = 0
    const begin = async () => {
      tx = await checkout(this.pool)
      await tx.client.query('BEGIN')
      await tx.client.query('INSERT INTO blobs (name, size, created_at) VALUES ($1, 0, $2)', [name, Date.now()])
    }
    const flush = async () => {
      if (!tx) await begin()
      // Awaited before the buffer is reused: the bytes are on the wire by then.
      await tx!.client.query('INSERT INTO blob_chunks (blob_name, idx, data) VALUES ($1, $2, $3)', [name, index++, buffer.subarray(0, buffered)])
      buffered = 0
    }
    try {
      let size = 0
      for await (const chunk of source) {
        size += chunk.byteLength
        if (size > options.maxBytes) throw new BlobTooLargeError(options.maxBytes)
        let offset = 0
        while (offset < chunk.byteLength) {
          const take = Math.min(buffer.length - buffered, chunk.byteLength - offset)
          buffer.set(chunk.subarray(offset, offset + take), buffered)
          buffered += take
          offset += take
          if (buffered === buffer.length) await flush()
        }
      }
      if (buffered > 0) await flush()
      if (!tx) await begin() // an empty blob
      await tx!.client.query('UPDATE blobs SET size = $2 WHERE name = $1', [name, size])
      await tx!.client.query('COMMIT')
      return { name, size }
    } catch (err) {
      // The connection may be the failure (server gone): then it is discarded, not returned to the pool.
      await tx?.client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError
      })
      throw err
    } finally {
      tx?.release(broken)
    }
  }

  async get(name: string): Promise<{ stream: Readable; size: number } | undefined> {
    checkName(name)
    const { client, release } = await checkout(this.pool)
    let size: number
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const head = await client.query<{ size: number }>('SELECT size FROM blobs WHERE name = $1', [name])
      if (head.rows.length === 0) {
        await client.query('ROLLBACK')
        release()
        return undefined
      }
      size = head.rows[0]!.size
    } catch (err) {
      release(err as Error)
      throw err
    }
    // One chunk per pull: Readable asks for more only when its consumer has drained what it had.
    async function* chunks(): AsyncGenerator<Buffer> {
      let read = 0
      for (let idx = 0; ; idx++) {
        const { rows } = await client.query<{ data: Buffer }>('SELECT data FROM blob_chunks WHERE blob_name = $1 AND idx = $2', [name, idx])
        if (rows.length === 0) break
        read += rows[0]!.data.length
        yield rows[0]!.data
      }
      if (read !== size) throw new Error(`Blob ${name} is corrupt: ${read} bytes stored, ${size} expected`)
    }
    const stream = Readable.from(chunks(), { objectMode: false })
    // 'close' comes after the generator has finished or returned (no query in flight): end the snapshot.
    stream.once('close', () => {
      client.query('ROLLBACK').then(
        () => release(),
        (err: Error) => release(err),
      )
    })
    return { stream, size }
  }

  /**
   * Copied inside the database, on one connection (a get and a put would hold two, and concurrent copies
   * could then exhaust the pool waiting on each other). REPEATABLE READ: the head and the chunks come from one
   * snapshot, so a concurrent delete of the source cannot leave a partial copy.
   */
  async copy(name: string): Promise<{ name: string; size: number } | undefined> {
    checkName(name)
    const copy = randomBytes(16).toString('hex')
    const { client, release } = await checkout(this.pool)
    let broken: Error | undefined
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
      const head = await client.query<{ size: number }>(
        'INSERT INTO blobs (name, size, created_at) SELECT $2, size, $3 FROM blobs WHERE name = $1 RETURNING size', [name, copy, Date.now()])
      if (head.rows.length === 0) {
        await client.query('ROLLBACK')
        return undefined
      }
      await client.query('INSERT INTO blob_chunks (blob_name, idx, data) SELECT $2, idx, data FROM blob_chunks WHERE blob_name = $1', [name, copy])
      await client.query('COMMIT')
      return { name: copy, size: Number(head.rows[0]!.size) }
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError
      })
      throw err
    } finally {
      release(broken)
    }
  }

  async delete(name: string): Promise<boolean> {
    checkName(name)
    // One statement: the head and (ON DELETE CASCADE) every chunk go together or not at all.
    const result = await this.pool.query('DELETE FROM blobs WHERE name = $1', [name])
    return (result.rowCount ?? 0) > 0
  }

  async exists(name: string): Promise<boolean> {
    checkName(name)
    const result = await this.pool.query('SELECT 1 FROM blobs WHERE name = $1', [name])
    return result.rows.length > 0
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}

/** A PostgresBlobStore on its own pool. The tables come from the store's migrations (createPostgresStore runs them). */
export function createPostgresBlobStore(options: PostgresBlobOptions): PostgresBlobStore {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 4,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'parley-blobs',
    types: parleyTypeParsers(),
  })
  pool.on('error', (err) => options.onPoolError?.(err))
  return new PostgresBlobStore(pool)
}
