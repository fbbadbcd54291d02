/**
 * The BlobStore contract against the local-disk implementation, plus what is specific to it:
 * the on-disk layout (random names under the root only), file modes, and the sweep of temp files
 * left by a crash.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LocalBlobStore } from '../../src/blobs/local.js'
import { blobStoreContract } from './blobs.contract.js'

function tree(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      if (statSync(path).isDirectory()) walk(path)
      else out.push(relative(root, path))
    }
  }
  walk(root)
  return out.sort()
}

blobStoreContract('local disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-blobs-'))
  const root = join(dir, 'blobs')
  return {
    blobs: new LocalBlobStore(root),
    residue: async () => tree(dir),
    another: async () => new LocalBlobStore(root),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})

describe('LocalBlobStore specifics', () => {
  let dir: string
  let root: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-blobs-'))
    root = join(dir, 'blobs')
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('adopt moves the blobs of another root (the former webhook-blobs directory) in under their names, and removes it', async () => {
    const legacy = new LocalBlobStore(join(dir, 'webhook-blobs'))
    const a = await legacy.put(Readable.from([Buffer.from('{"a":1}')]), { maxBytes: 100 })
    const b = await legacy.put(Readable.from([Buffer.from('{"b":2}')]), { maxBytes: 100 })
    writeFileSync(join(dir, 'webhook-blobs', 'tmp', `${'e'.repeat(32)}.part`), 'partial')
    const blobs = new LocalBlobStore(root)
    expect(await blobs.adopt(join(dir, 'webhook-blobs'))).toBe(2)
    for (const [name, text] of [[a.name, '{"a":1}'], [b.name, '{"b":2}']] as const) {
      const got = (await blobs.get(name))!
      expect(Buffer.concat(await got.stream.toArray()).toString()).toBe(text)
    }
    expect(tree(dir)).toEqual([a.name, b.name].map((n) => `blobs/${n.slice(0, 2)}/${n}`).sort())
    expect(await blobs.adopt(join(dir, 'webhook-blobs'))).toBe(0)
  })

  it('stores blobs as root/<2 hex>/<32 hex>, owner-only, and nothing outside the root', async () => {
    const blobs = new LocalBlobStore(root)
    const { name } = await blobs.put(Readable.from([Buffer.from('hello')]), { maxBytes: 5 })
    expect(name).toMatch(/^[0-9a-f]{32}$/)
    expect(tree(dir)).toEqual([`blobs/${name.slice(0, 2)}/${name}`])
    expect(statSync(join(root, name.slice(0, 2), name)).mode & 0o777).toBe(0o600)
    expect(readdirSync(join(root, 'tmp'))).toEqual([])
  })

  it('sweeps stale temp files left by a crash, and keeps recent ones (uploads in progress)', async () => {
    const blobs = new LocalBlobStore(root)
    await blobs.put(Readable.from([Buffer.from('init')]), { maxBytes: 10 })
    const stale = join(root, 'tmp', 'deadbeefdeadbeefdeadbeefdeadbeef.part')
    const fresh = join(root, 'tmp', 'cafebabecafebabecafebabecafebabe.part')
    writeFileSync(stale, 'half an upload')
    writeFileSync(fresh, 'an upload in progress')
    const old = new Date(Date.now() - 7 * 3600_000)
    utimesSync(stale, old, old)
    expect(await blobs.sweepTemp(6 * 3600_000)).toBe(1)
    expect(readdirSync(join(root, 'tmp'))).toEqual(['cafebabecafebabecafebabecafebabe.part'])
  })

  it('a new store instance sweeps stale temp files on first use', async () => {
    const first = new LocalBlobStore(root)
    await first.put(Readable.from([Buffer.from('x')]), { maxBytes: 1 })
    const stale = join(root, 'tmp', '0123456789abcdef0123456789abcdef.part')
    writeFileSync(stale, 'left by a crash')
    const old = new Date(Date.now() - 24 * 3600_000)
    utimesSync(stale, old, old)
    const second = new LocalBlobStore(root)
    await second.put(Readable.from([Buffer.from('y')]), { maxBytes: 1 })
    expect(readdirSync(join(root, 'tmp'))).toEqual([])
  })

  it('blob names are never derived from anything the caller controls', async () => {
    const blobs = new LocalBlobStore(root)
    const names = new Set<string>()
    for (let i = 0; i < 50; i++) names.add((await blobs.put(Readable.from([Buffer.from('../../etc/passwd')]), { maxBytes: 100 })).name)
    expect(names.size).toBe(50)
    expect(tree(dir).every((p) => /^blobs\/[0-9a-f]{2}\/[0-9a-f]{32}$/.test(p))).toBe(true)
  })
})
