import { randomBytes } from 'node:crypto'
import { mkdir, open, readdir, rename, rm, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { BlobTooLargeError, InvalidBlobNameError, type BlobStore } from './blob-store.js'

/** The only names this store produces and accepts: 128 random bits in lowercase hex. */
const BLOB_NAME = /^[0-9a-f]{32}$/
const TEMP_SUFFIX = '.part'
/** Temp files older than this are crash leftovers (an upload cannot last that long: requestTimeout). */
const STALE_TEMP_MS = 6 * 60 * 60 * 1000

const isNotFound = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'

async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    await handle?.close().catch(() => {})
  }
}

/**
 * Blobs on the local disk under `root` (`${dataDir}/blobs`):
 * - `root/ab/ab…` for a blob named `ab…` (two-character shards keep directories small);
 * - `root/tmp/*.part` while a put is in progress.
 * A put writes a temp file, fsyncs it, renames it into place and fsyncs the directory, so a blob is
 * either complete and durable or absent. Names are validated against BLOB_NAME before any path is
 * built, so no name can point outside the root.
 */
export class LocalBlobStore implements BlobStore {
  private readonly tempDir: string
  private ready: Promise<void> | undefined

  constructor(readonly root: string) {
    this.tempDir = join(root, 'tmp')
  }

  private pathOf(name: string): { dir: string; path: string } {
    if (typeof name !== 'string' || !BLOB_NAME.test(name)) throw new InvalidBlobNameError()
    const dir = join(this.root, name.slice(0, 2))
    return { dir, path: join(dir, name) }
  }

  private init(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.tempDir, { recursive: true, mode: 0o700 })
      await this.sweepTemp(STALE_TEMP_MS)
    })()
    return this.ready
  }

  /** Removes temp files older than `olderThanMs` (left by a crash during a put). Returns how many. */
  async sweepTemp(olderThanMs: number): Promise<number> {
    let removed = 0
    const entries = await readdir(this.tempDir).catch(() => [] as string[])
    for (const entry of entries) {
      if (!entry.endsWith(TEMP_SUFFIX)) continue
      const path = join(this.tempDir, entry)
      const info = await stat(path).catch(() => undefined)
      if (info && Date.now() - info.mtimeMs >= olderThanMs) {
        await unlink(path).then(() => removed++, () => {})
      }
    }
    return removed
  }

  async put(source: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<{ name: string; size: number }> {
    await this.init()
    const name = randomBytes(16).toString('hex')
    const { dir, path } = this.pathOf(name)
    const temp = join(this.tempDir, `${name}${TEMP_SUFFIX}`)
    const handle = await open(temp, 'wx', 0o600)
    let writing = true
    let size = 0
    try {
      for await (const chunk of source) {
        size += chunk.byteLength
        if (size > options.maxBytes) throw new BlobTooLargeError(options.maxBytes)
        let offset = 0
        while (offset < chunk.byteLength) {
          const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset)
          offset += bytesWritten
        }
      }
      await handle.sync()
      writing = false
      await handle.close()
      await mkdir(dir, { recursive: true, mode: 0o700 })
      await rename(temp, path)
      await syncDirectory(dir)
      return { name, size }
    } catch (err) {
      if (writing) await handle.close().catch(() => {})
      await unlink(temp).catch(() => {})
      throw err
    }
  }

  async get(name: string): Promise<{ stream: Readable; size: number } | undefined> {
    const { path } = this.pathOf(name)
    let handle: FileHandle
    try {
      handle = await open(path, 'r')
    } catch (err) {
      if (isNotFound(err)) return undefined
      throw err
    }
    try {
      const { size } = await handle.stat()
      // The stream owns the handle from here on and closes it when it ends or is destroyed.
      return { stream: handle.createReadStream(), size }
    } catch (err) {
      await handle.close().catch(() => {})
      throw err
    }
  }

  /** Streams the blob into a new one through put (an open file survives a concurrent delete). */
  async copy(name: string): Promise<{ name: string; size: number } | undefined> {
    const source = await this.get(name)
    if (!source) return undefined
    try {
      return await this.put(source.stream, { maxBytes: source.size })
    } finally {
      source.stream.destroy()
    }
  }

  async delete(name: string): Promise<boolean> {
    const { path } = this.pathOf(name)
    try {
      await unlink(path)
      return true
    } catch (err) {
      if (isNotFound(err)) return false
      throw err
    }
  }

  /**
   * Moves every blob stored under another root of this layout into this store (same names; renames,
   * so both roots should be on one filesystem), then removes the emptied directories. For a layout
   * change (webhook bodies were kept under `${dataDir}/webhook-blobs` before they moved to the blob
   * store): their queued deliveries keep working. Returns how many blobs moved; a missing root is none.
   */
  async adopt(otherRoot: string): Promise<number> {
    const shards = await readdir(otherRoot, { withFileTypes: true }).catch((err: unknown) => {
      if (isNotFound(err)) return []
      throw err
    })
    let moved = 0
    for (const shard of shards) {
      if (!shard.isDirectory() || !/^[0-9a-f]{2}$/.test(shard.name)) continue
      for (const name of await readdir(join(otherRoot, shard.name))) {
        if (!BLOB_NAME.test(name)) continue
        const { dir, path } = this.pathOf(name)
        await mkdir(dir, { recursive: true, mode: 0o700 })
        // Another instance on a shared volume may be moving it too.
        await rename(join(otherRoot, shard.name, name), path).then(() => moved++, (err: unknown) => { if (!isNotFound(err)) throw err })
      }
      await rmdir(join(otherRoot, shard.name)).catch(() => {})
    }
    // Temp files there are leftovers of puts that never completed.
    await rm(join(otherRoot, 'tmp'), { recursive: true, force: true })
    await rmdir(otherRoot).catch(() => {})
    return moved
  }

  async exists(name: string): Promise<boolean> {
    const { path } = this.pathOf(name)
    try {
      return (await stat(path)).isFile()
    } catch (err) {
      if (isNotFound(err)) return false
      throw err
    }
  }
}
