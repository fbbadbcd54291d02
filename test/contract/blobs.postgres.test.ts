/**
 * The BlobStore contract against PostgreSQL (tables of migrations/postgres/0003_blobs.sql), plus what
 * is specific to it: the chunk layout, an upload in progress invisible to everyone else, a crash
 * (connection killed) mid-upload leaving nothing, snapshot reads across a delete, and the bounded pool.
 */
import { randomBytes, createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BLOB_CHUNK_BYTES, createPostgresBlobStore, type PostgresBlobStore } from '../../src/blobs/postgres.js'
import { isUnavailableError } from '../../src/lib/errors.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { createPostgresStore } from '../../src/store/postgres.js'
import { dropDatabase, freshDatabase, pgBaseUrl } from '../helpers/pg.js'
import { blobStoreContract } from './blobs.contract.js'

const hasPg = pgBaseUrl() !== null
let url: string
let store: KyselyStore | undefined
/** A plain connection to look at the tables as an operator would. */
let admin: pg.Pool

beforeAll(async () => {
  if (!hasPg) return
  url = await freshDatabase()
  store = await createPostgresStore({ url, poolSize: 2 }) // runs the migrations, 0003_blobs included
  admin = new pg.Pool({ connectionString: url, max: 2 })
})

afterAll(async () => {
  await admin?.end()
  await store?.close()
  if (url) await dropDatabase(url)
})

async function residue(): Promise<string[]> {
  const { rows } = await admin.query<{ item: string }>(
    `SELECT 'blob ' || name || ' ' || size AS item FROM blobs
     UNION ALL SELECT 'chunk ' || blob_name || ' ' || idx || ' ' || length(data) FROM blob_chunks ORDER BY 1`,
  )
  return rows.map((r) => r.item)
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

describe.skipIf(!hasPg)('postgres blobs', () => {
  blobStoreContract('postgres', async () => {
    const opened: PostgresBlobStore[] = []
    const open = () => {
      const blobs = createPostgresBlobStore({ url, poolSize: 4 })
      opened.push(blobs)
      return blobs
    }
    return {
      blobs: open(),
      residue,
      another: async () => open(),
      cleanup: async () => {
        await admin.query('DELETE FROM blobs')
        for (const blobs of opened) await blobs.close().catch(() => {})
      },
    }
  })

  describe('PostgresBlobStore specifics', () => {
    let blobs: PostgresBlobStore
    beforeAll(() => {
      blobs = createPostgresBlobStore({ url, poolSize: 3 })
    })
    afterAll(async () => blobs?.close())

    it('stores content in numbered chunks of at most 256 KiB, and a delete removes them all', async () => {
      const data = randomBytes(2 * BLOB_CHUNK_BYTES + 1000)
      const { name } = await blobs.put(Readable.from([data.subarray(0, 5), data.subarray(5)]), { maxBytes: data.length })
      const { rows } = await admin.query<{ idx: number; len: number }>('SELECT idx, length(data) AS len FROM blob_chunks WHERE blob_name = $1 ORDER BY idx', [name])
      expect(rows).toEqual([
        { idx: 0, len: BLOB_CHUNK_BYTES },
        { idx: 1, len: BLOB_CHUNK_BYTES },
        { idx: 2, len: 1000 },
      ])
      expect(await blobs.delete(name)).toBe(true)
      expect((await admin.query('SELECT 1 FROM blob_chunks WHERE blob_name = $1', [name])).rows).toEqual([])
    })

    it('an upload in progress is invisible to every other connection; a crash of its connection leaves nothing', async () => {
      const before = await residue()
      let release!: () => void
      const gate = new Promise<void>((resolve) => (release = resolve))
      let sent = 0
      async function* slow() {
        for (let i = 0; i < 4; i++) {
          sent++
          yield randomBytes(BLOB_CHUNK_BYTES)
        }
        await gate
        yield randomBytes(10)
      }
      const put = blobs.put(slow(), { maxBytes: 10 * BLOB_CHUNK_BYTES })
      const outcome = put.then(() => 'stored', (err: Error) => err)
      while (sent < 4) await new Promise((r) => setTimeout(r, 20))
      await new Promise((r) => setTimeout(r, 200))
      // Four chunks are written inside the open transaction, yet nobody else sees a byte of them.
      expect(await residue()).toEqual(before)
      // The instance dies mid-upload: its connection goes away, PostgreSQL rolls back.
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'parley-blobs' AND state LIKE 'idle in transaction%' AND datname = current_database()`,
      )
      expect(killed.rows.length).toBe(1)
      release()
      const result = await outcome
      expect(result).toBeInstanceOf(Error)
      expect(isUnavailableError(result)).toBe(true)
      expect(await residue()).toEqual(before)
      // The pool dropped the dead connection and serves the next transfer.
      const again = await blobs.put(Readable.from([Buffer.from('after the crash')]), { maxBytes: 100 })
      expect((await readAll((await blobs.get(again.name))!.stream)).toString()).toBe('after the crash')
    })

    it('a multi-chunk download keeps its snapshot while the blob is deleted by another instance', async () => {
      const other = createPostgresBlobStore({ url, poolSize: 1 })
      try {
        const data = randomBytes(5 * BLOB_CHUNK_BYTES + 3)
        const { name } = await blobs.put(Readable.from([data]), { maxBytes: data.length })
        const blob = (await blobs.get(name))!
        const first = await new Promise<Buffer>((resolve) => blob.stream.once('data', resolve))
        blob.stream.pause()
        expect(await other.delete(name)).toBe(true)
        expect(await other.exists(name)).toBe(false)
        const rest = await readAll(blob.stream)
        expect(sha(Buffer.concat([first, rest]))).toBe(sha(data))
      } finally {
        await other.close()
      }
    })

    it('transfers wait for a free blob connection: an abandoned download frees its connection when destroyed', async () => {
      const one = createPostgresBlobStore({ url, poolSize: 1, connectionTimeoutMs: 20_000 })
      try {
        const { name } = await one.put(Readable.from([randomBytes(3 * BLOB_CHUNK_BYTES)]), { maxBytes: 3 * BLOB_CHUNK_BYTES })
        const held = (await one.get(name))!
        // Read one chunk, then stall, as a slow HTTP client would.
        await new Promise((resolve) => held.stream.once('readable', resolve))
        expect(held.stream.read()).not.toBeNull()
        let second: Awaited<ReturnType<typeof one.get>> | 'pending' = 'pending'
        const waiting = one.get(name).then((b) => (second = b))
        await new Promise((r) => setTimeout(r, 300))
        expect(second).toBe('pending')
        held.stream.destroy() // the HTTP client went away
        await waiting
        expect((await readAll((second as unknown as { stream: Readable }).stream)).length).toBe(3 * BLOB_CHUNK_BYTES)
      } finally {
        await one.close()
      }
    })

    it('a small upload trickling in holds no connection until its last byte (the only pooled connection stays free)', async () => {
      const one = createPostgresBlobStore({ url, poolSize: 1, connectionTimeoutMs: 2000 })
      try {
        const other = await one.put(Readable.from([Buffer.from('other')]), { maxBytes: 10 })
        let release!: () => void
        const gate = new Promise<void>((resolve) => (release = resolve))
        async function* trickle() {
          yield Buffer.from('first part, ')
          await gate
          yield Buffer.from('then the rest')
        }
        const put = one.put(trickle(), { maxBytes: 1000 })
        await new Promise((r) => setTimeout(r, 100))
        // With the connection held by the waiting upload, these would time out after 2 s.
        expect(await one.exists(other.name)).toBe(true)
        expect((await readAll((await one.get(other.name))!.stream)).toString()).toBe('other')
        release()
        const { name } = await put
        expect((await readAll((await one.get(name))!.stream)).toString()).toBe('first part, then the rest')
      } finally {
        await one.close()
      }
    })

    it('an unreachable PostgreSQL is reported as unavailable (503), not as a bug', async () => {
      const u = new URL(url)
      u.port = '1' // nothing listens there
      const down = createPostgresBlobStore({ url: u.toString(), poolSize: 1, connectionTimeoutMs: 2000 })
      try {
        const error = await down.put(Readable.from([Buffer.from('x')]), { maxBytes: 1 }).catch((e: unknown) => e)
        expect(isUnavailableError(error)).toBe(true)
        const getError = await down.get('0'.repeat(32)).catch((e: unknown) => e)
        expect(isUnavailableError(getError)).toBe(true)
      } finally {
        await down.close()
      }
    })
  })
})
