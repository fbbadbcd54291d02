/**
 * File content across instances (issue #5): two real Parley processes (`src/main.ts`, as `npm run dev`
 * runs it) on one PostgreSQL database, each with its own data directory, so nothing is shared but the
 * database. With the default blob store on PostgreSQL, a file uploaded through one instance downloads
 * through the other, and the signed URLs of one verify on the other (the signing secret is a row of
 * the shared settings table). A third instance with PARLEY_BLOB_STORE=local is the control: its
 * uploads land on its own disk, which the others cannot serve.
 * PostgreSQL only: skipped in the SQLite pass.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/harness.js'
import { dropDatabase, freshDatabase, pgBaseUrl, testStoreKind } from '../helpers/pg.js'

const ROOT = join(import.meta.dirname, '..', '..')

interface Instance {
  baseUrl: string
  dataDir: string
  child: ChildProcess
  output: () => string
}

/** Starts `node --import tsx src/main.ts` and waits for its banner. */
async function startInstance(databaseUrl: string, env: Record<string, string> = {}): Promise<Instance> {
  const port = await freePort()
  // A data directory that does not exist yet, as on a fresh machine: Parley creates it (nothing else does on PostgreSQL).
  const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-xinst-')), 'data')
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir, PARLEY_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance did not start within 60 s:\n${output}`)), 60_000)
    const check = () => {
      if (output.includes('Parley is running at')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', check)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`instance exited with ${code}:\n${output}`))
    })
  })
  return { baseUrl: `http://127.0.0.1:${port}`, dataDir, child, output: () => output }
}

async function stopInstance(instance: Instance | undefined): Promise<void> {
  if (!instance) return
  if (instance.child.exitCode === null) {
    const exited = new Promise((resolve) => instance.child.once('exit', resolve))
    instance.child.kill('SIGTERM')
    await exited
  }
  rmSync(join(instance.dataDir, '..'), { recursive: true, force: true })
}

async function fetchBytes(url: string, init?: RequestInit): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(url, init)
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }
}

/** The same path and query on another instance. */
const on = (instance: Instance, url: string) => {
  const u = new URL(url)
  return `${instance.baseUrl}${u.pathname}${u.search}`
}

/** Regular files under DIR/blobs (the local blob store), excluding its temp directory. */
function localBlobs(dataDir: string): string[] {
  const root = join(dataDir, 'blobs')
  if (!existsSync(root)) return []
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.parentPath.endsWith('tmp'))
    .map((e) => join(e.parentPath, e.name))
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const uid = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`

describe.skipIf(testStoreKind() !== 'postgres' || pgBaseUrl() === null)('e2e: file content across two Parley processes on one PostgreSQL', () => {
  let databaseUrl: string
  let a: Instance | undefined
  let b: Instance | undefined
  let clientA: Client
  let clientB: Client

  beforeAll(async () => {
    databaseUrl = await freshDatabase()
    // One after the other: A bootstraps the database and writes credentials.json; B finds it bootstrapped.
    a = await startInstance(databaseUrl)
    b = await startInstance(databaseUrl)
    const credentials = JSON.parse(readFileSync(join(a.dataDir, 'credentials.json'), 'utf8')) as { token: string; botId: string }
    expect(existsSync(join(b.dataDir, 'credentials.json'))).toBe(false)
    clientA = new Client({ apiUrl: a.baseUrl, token: credentials.token, botId: credentials.botId })
    clientB = new Client({ apiUrl: b.baseUrl, token: credentials.token, botId: credentials.botId })
  }, 150_000)

  afterAll(async () => {
    await Promise.all([stopInstance(a), stopInstance(b)])
    if (databaseUrl) await dropDatabase(databaseUrl)
  }, 60_000)

  it('both banners say file content is in PostgreSQL', () => {
    for (const instance of [a!, b!]) expect(instance.output()).toMatch(/File content:\s+PostgreSQL/)
  })

  it('uploaded through A (official client) → getFile and download through B, with B\'s URL and with A\'s signed URL', async () => {
    const content = randomBytes(1_500_000)
    const key = uid('cross') + '.bin'
    const { file } = await clientA.uploadFile({ key, content })
    expect(file.uploadUrl.startsWith(`${a!.baseUrl}/`)).toBe(true)

    const seen = (await clientB.getFile({ id: key })).file
    expect(seen).toMatchObject({ id: file.id, size: content.length, status: 'upload_completed' })
    expect(seen.url.startsWith(`${b!.baseUrl}/`)).toBe(true)
    const viaB = await fetchBytes(seen.url)
    expect(viaB.status).toBe(200)
    expect(sha(viaB.bytes)).toBe(sha(content))

    // A's signed URL verifies on B: the signing secret is shared through the database.
    const fromA = (await clientA.getFile({ id: file.id })).file.url
    expect(new URL(fromA).searchParams.get('signature')).toBeTruthy()
    const crossed = await fetchBytes(on(b!, fromA))
    expect(crossed.status).toBe(200)
    expect(sha(crossed.bytes)).toBe(sha(content))
    // A tampered signature is refused there too.
    const forged = new URL(on(b!, fromA))
    forged.searchParams.set('signature', forged.searchParams.get('signature')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')))
    expect((await fetchBytes(forged.toString())).status).toBe(403)

    // Neither instance wrote the content to its own disk.
    expect(localBlobs(a!.dataDir)).toEqual([])
    expect(localBlobs(b!.dataDir)).toEqual([])
  })

  it('upload URL issued by A, content PUT to B; re-upload through B replaces it for A; delete through B → gone on A', async () => {
    const key = uid('swap') + '.txt'
    const { file } = await clientA.upsertFile({ key, size: 11 })
    const put = await fetchBytes(on(b!, file.uploadUrl), { method: 'PUT', body: 'hello world', headers: { 'content-type': 'text/plain' } })
    expect(put.status).toBe(200)
    const first = (await clientA.getFile({ id: key })).file
    expect(first.status).toBe('upload_completed')
    expect((await fetchBytes(first.url)).bytes.toString()).toBe('hello world')

    const replacement = randomBytes(700_000)
    await clientB.uploadFile({ key, content: replacement })
    const second = (await clientA.getFile({ id: key })).file
    expect(second.size).toBe(replacement.length)
    expect(sha((await fetchBytes(second.url)).bytes)).toBe(sha(replacement))

    const downloadUrl = second.url
    await clientB.deleteFile({ id: key })
    expect((await fetchBytes(downloadUrl)).status).toBe(404)
    expect((await fetchBytes(on(b!, downloadUrl))).status).toBe(404)
  })

  it('control: an instance with PARLEY_BLOB_STORE=local keeps content on its own disk, which the others cannot serve', async () => {
    const c = await startInstance(databaseUrl, { PARLEY_BLOB_STORE: 'local' })
    try {
      expect(c.output()).toMatch(/File content:\s+\S+blobs \(local disk\)/)
      const credentials = JSON.parse(readFileSync(join(a!.dataDir, 'credentials.json'), 'utf8')) as { token: string; botId: string }
      const clientC = new Client({ apiUrl: c.baseUrl, token: credentials.token, botId: credentials.botId })
      const content = randomBytes(5000)
      const { file } = await clientC.uploadFile({ key: uid('local') + '.bin', content })
      expect(localBlobs(c.dataDir)).toHaveLength(1)
      const fromC = (await clientC.getFile({ id: file.id })).file.url
      expect(sha((await fetchBytes(fromC)).bytes)).toBe(sha(content))
      // The row is shared (status upload_completed everywhere), the bytes are not.
      expect((await clientA.getFile({ id: file.id })).file.status).toBe('upload_completed')
      expect((await fetchBytes(on(a!, fromC))).status).toBe(404)
    } finally {
      await stopInstance(c)
    }
  }, 90_000)
})
