/**
 * The BlobStore contract: every implementation (local disk, PostgreSQL) must pass this suite
 * unchanged. It only uses the BlobStore interface, plus a `residue()` hook through which an
 * implementation lists everything it physically stores (blobs and temporary objects), so that
 * "nothing is left behind" can be checked, and `another()`: a second store instance on the same
 * storage, as a second Parley instance would have (what a shared store must guarantee).
 */
import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BlobTooLargeError, InvalidBlobNameError, type BlobStore } from '../../src/blobs/blob-store.js'

export interface BlobStoreFixture {
  blobs: BlobStore
  /** Everything the implementation stores, temporary objects included (sorted). */
  residue(): Promise<string[]>
  /** A second, independent store instance on the same storage (closed by the suite). */
  another(): Promise<BlobStore>
  cleanup(): Promise<void>
}

export type BlobStoreFactory = () => Promise<BlobStoreFixture>

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array))
  return Buffer.concat(chunks)
}

async function content(blobs: BlobStore, name: string): Promise<Buffer | undefined> {
  const blob = await blobs.get(name)
  if (!blob) return undefined
  const bytes = await readAll(blob.stream)
  expect(blob.size).toBe(bytes.length)
  return bytes
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

/** Splits `data` into chunks of irregular sizes (1 byte to 64 KiB, with empty chunks) as a network would. */
function* irregular(data: Buffer): Generator<Buffer> {
  let offset = 0
  let i = 0
  while (offset < data.length) {
    const size = [1, 7, 4096, 65_536, 0, 13, 1500][i++ % 7]!
    yield data.subarray(offset, offset + size)
    offset += size
  }
}

/** V8's gc(), without starting node with --expose-gc: live memory can then be measured exactly. */
function gcFunction(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

/** Bytes held in Buffers and ArrayBuffers that are still reachable (after a full collection). */
function liveBufferBytes(gc: () => void): number {
  gc()
  return process.memoryUsage().arrayBuffers
}

export function blobStoreContract(name: string, factory: BlobStoreFactory): void {
  describe(`BlobStore contract: ${name}`, () => {
    let f: BlobStoreFixture
    beforeEach(async () => {
      f = await factory()
    })
    afterEach(async () => f.cleanup())

    it('streams a multi-megabyte upload in irregular chunks and gives back the same bytes', async () => {
      const data = randomBytes(3 * 1024 * 1024 + 17)
      const { name, size } = await f.blobs.put(Readable.from(irregular(data)), { maxBytes: data.length })
      expect(size).toBe(data.length)
      const back = await content(f.blobs, name)
      expect(back!.length).toBe(data.length)
      expect(sha(back!)).toBe(sha(data))
      expect(await f.blobs.exists(name)).toBe(true)
    })

    it('stores every byte value, Uint8Array chunks and an async generator source', async () => {
      const all = new Uint8Array(Array.from({ length: 256 }, (_, i) => i))
      async function* source() {
        yield all.subarray(0, 100)
        await new Promise((r) => setTimeout(r, 5))
        yield all.subarray(100)
      }
      const { name, size } = await f.blobs.put(source(), { maxBytes: 256 })
      expect(size).toBe(256)
      expect(Buffer.compare((await content(f.blobs, name))!, Buffer.from(all))).toBe(0)
    })

    it('stores an empty blob', async () => {
      const { name, size } = await f.blobs.put(Readable.from([]), { maxBytes: 0 })
      expect(size).toBe(0)
      expect((await content(f.blobs, name))!.length).toBe(0)
    })

    it('accepts exactly maxBytes; refuses maxBytes + 1 with BlobTooLargeError and leaves nothing behind', async () => {
      const limit = 10_000
      const ok = await f.blobs.put(Readable.from(irregular(randomBytes(limit))), { maxBytes: limit })
      expect(ok.size).toBe(limit)
      const before = await f.residue()
      await expect(f.blobs.put(Readable.from(irregular(randomBytes(limit + 1))), { maxBytes: limit })).rejects.toBeInstanceOf(BlobTooLargeError)
      expect(await f.residue()).toEqual(before)
    })

    it('stops reading the source as soon as the limit is passed (does not buffer the rest)', async () => {
      let pulled = 0
      async function* endless() {
        for (;;) {
          pulled++
          yield Buffer.alloc(1024, 1)
        }
      }
      const error = await f.blobs.put(endless(), { maxBytes: 4096 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(BlobTooLargeError)
      expect((error as BlobTooLargeError).limit).toBe(4096)
      expect(pulled).toBeLessThanOrEqual(6)
    })

    it('a source that fails midway rejects with its error and leaves nothing behind', async () => {
      const before = await f.residue()
      async function* broken() {
        yield Buffer.alloc(5000, 2)
        throw new Error('connection reset by peer')
      }
      await expect(f.blobs.put(broken(), { maxBytes: 1_000_000 })).rejects.toThrow('connection reset by peer')
      expect(await f.residue()).toEqual(before)
    })

    it('concurrent puts get distinct names and keep their own content', async () => {
      const inputs = Array.from({ length: 24 }, (_, i) => randomBytes(20_000 + i * 997))
      const results = await Promise.all(inputs.map((data) => f.blobs.put(Readable.from(irregular(data)), { maxBytes: 1_000_000 })))
      expect(new Set(results.map((r) => r.name)).size).toBe(inputs.length)
      for (const [i, r] of results.entries()) {
        expect(r.size).toBe(inputs[i]!.length)
        expect(sha((await content(f.blobs, r.name))!)).toBe(sha(inputs[i]!))
      }
    })

    it('names are chosen by the store: opaque, unique even for identical content, with no path characters', async () => {
      const data = Buffer.from('same content')
      const a = await f.blobs.put(Readable.from([data]), { maxBytes: 100 })
      const b = await f.blobs.put(Readable.from([data]), { maxBytes: 100 })
      expect(a.name).not.toBe(b.name)
      for (const n of [a.name, b.name]) expect(n).toMatch(/^[A-Za-z0-9_-]{16,}$/)
    })

    it('a missing blob: get → undefined, exists → false, delete → false', async () => {
      const { name } = await f.blobs.put(Readable.from([Buffer.from('x')]), { maxBytes: 1 })
      expect(await f.blobs.delete(name)).toBe(true)
      expect(await f.blobs.get(name)).toBeUndefined()
      expect(await f.blobs.exists(name)).toBe(false)
      expect(await f.blobs.delete(name)).toBe(false)
    })

    it('a blob can be read several times, concurrently, and reads survive a concurrent delete', async () => {
      const data = randomBytes(200_000)
      const { name } = await f.blobs.put(Readable.from([data]), { maxBytes: data.length })
      const [one, two] = await Promise.all([f.blobs.get(name), f.blobs.get(name)])
      await f.blobs.delete(name)
      const [x, y] = await Promise.all([readAll(one!.stream), readAll(two!.stream)])
      expect(sha(x)).toBe(sha(data))
      expect(sha(y)).toBe(sha(data))
    })

    it('a second store instance on the same storage sees every write and delete of the first, and the reverse', async () => {
      const other = await f.another()
      try {
        const data = randomBytes(700_000)
        const { name } = await f.blobs.put(Readable.from(irregular(data)), { maxBytes: data.length })
        expect(await other.exists(name)).toBe(true)
        expect(sha((await content(other, name))!)).toBe(sha(data))
        const back = randomBytes(1000)
        const second = await other.put(Readable.from([back]), { maxBytes: 1000 })
        expect(sha((await content(f.blobs, second.name))!)).toBe(sha(back))
        expect(await other.delete(name)).toBe(true)
        expect(await f.blobs.exists(name)).toBe(false)
        expect(await f.blobs.get(name)).toBeUndefined()
        expect(await f.blobs.delete(name)).toBe(false)
      } finally {
        await other.close?.()
      }
    })

    it('an upload that fails after several megabytes leaves nothing, for this instance or another one', async () => {
      const other = await f.another()
      try {
        const before = await f.residue()
        async function* failsLate() {
          for (let i = 0; i < 12; i++) yield randomBytes(300_000)
          throw new Error('client went away')
        }
        await expect(f.blobs.put(failsLate(), { maxBytes: 100_000_000 })).rejects.toThrow('client went away')
        await expect(other.put(failsLate(), { maxBytes: 100_000_000 })).rejects.toThrow('client went away')
        expect(await f.residue()).toEqual(before)
      } finally {
        await other.close?.()
      }
    })

    it('streams a 64 MiB blob in and out with bounded memory (never the whole blob in memory)', async () => {
      const gc = gcFunction()
      const SIZE = 64 * 1024 * 1024
      const piece = randomBytes(64 * 1024)
      const baseline = liveBufferBytes(gc)
      let peak = 0
      const hash = createHash('sha256')
      async function* big() {
        for (let sent = 0, i = 0; sent < SIZE; sent += piece.length, i++) {
          // A fresh buffer each time, as a socket gives; the last byte varies so chunks differ.
          const chunk = Buffer.from(piece)
          chunk[chunk.length - 1] = i & 0xff
          hash.update(chunk)
          if (i % 64 === 0) peak = Math.max(peak, liveBufferBytes(gc) - baseline)
          yield chunk
        }
      }
      const { name, size } = await f.blobs.put(big(), { maxBytes: SIZE })
      expect(size).toBe(SIZE)
      const blob = (await f.blobs.get(name))!
      expect(blob.size).toBe(SIZE)
      const back = createHash('sha256')
      let received = 0
      let chunks = 0
      for await (const chunk of blob.stream as AsyncIterable<Buffer>) {
        back.update(chunk)
        received += chunk.length
        if (++chunks % 16 === 0) peak = Math.max(peak, liveBufferBytes(gc) - baseline)
      }
      expect(received).toBe(SIZE)
      expect(back.digest('hex')).toBe(hash.digest('hex'))
      // A store that buffered the blob would hold 64 MiB at some point; streaming holds a few chunks
      // (plus, transiently, buffers of socket writes whose callbacks have not run yet).
      expect(peak).toBeLessThan(32 * 1024 * 1024)
      await f.blobs.delete(name)
    }, 120_000)

    it('copy: a new blob with the same bytes, independent of the source; a missing source → undefined', async () => {
      const data = randomBytes(700_000)
      const source = await f.blobs.put(Readable.from(irregular(data)), { maxBytes: data.length })
      const copy = (await f.blobs.copy(source.name))!
      expect(copy).toEqual({ name: expect.any(String), size: data.length })
      expect(copy.name).not.toBe(source.name)
      expect(copy.name).toMatch(/^[A-Za-z0-9_-]{16,}$/)
      expect(await f.blobs.delete(source.name)).toBe(true)
      expect(sha((await content(f.blobs, copy.name))!)).toBe(sha(data))
      expect(await f.blobs.copy(source.name)).toBeUndefined()
      const empty = await f.blobs.put(Readable.from([]), { maxBytes: 1 })
      const emptyCopy = (await f.blobs.copy(empty.name))!
      expect(emptyCopy.size).toBe(0)
      expect(await content(f.blobs, emptyCopy.name)).toEqual(Buffer.alloc(0))
      // Nothing else is stored: no temporary object, nothing of the deleted source.
      const live = [copy.name, empty.name, emptyCopy.name]
      expect((await f.residue()).filter((r) => !live.some((name) => r.includes(name)))).toEqual([])
    })

    it('refuses names it did not produce, without touching storage (no path tricks)', async () => {
      const before = await f.residue()
      for (const bad of ['', '..', '../x', '../../etc/passwd', '/etc/passwd', 'a/b', 'a\\b', 'x\u0000y', '%2e%2e%2f', 'A'.repeat(5000)]) {
        await expect(f.blobs.get(bad), bad).rejects.toBeInstanceOf(InvalidBlobNameError)
        await expect(f.blobs.exists(bad), bad).rejects.toBeInstanceOf(InvalidBlobNameError)
        await expect(f.blobs.delete(bad), bad).rejects.toBeInstanceOf(InvalidBlobNameError)
        await expect(f.blobs.copy(bad), bad).rejects.toBeInstanceOf(InvalidBlobNameError)
      }
      expect(await f.residue()).toEqual(before)
    })
  })
}
