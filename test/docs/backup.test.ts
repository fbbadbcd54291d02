/**
 * docs/operating.md's SQLite backup command, read from the page, run as written (from a folder whose `data` is a
 * running Parley's data directory) while the server takes writes: the copy opens, passes SQLite's integrity check and
 * holds every message written before the command started.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codeBlocks, ROOT } from '../helpers/doc-samples.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, Talk } from '../runtime/helpers.js'

let h: Harness
let work: string

describe("docs/operating.md's backup", () => {
  beforeAll(async () => {
    h = await startParley({ listen: true, store: 'sqlite' })
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true })
    // Under the repository, so `require('better-sqlite3')` resolves as it does in Parley's folder.
    work = mkdtempSync(join(ROOT, 'test-artifacts', 'backup-'))
    symlinkSync(h.dataDir, join(work, 'data'))
  })
  afterAll(async () => {
    await h?.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('copies a consistent database while messages are being written', async () => {
    const block = codeBlocks('docs/operating.md', 'sh').find((b) => b.heading === 'Backups')
    expect(block, 'the Backups section has its sh sample').toBeDefined()
    const command = block!.code.trim()
    expect(command).toMatch(/^node -e "/)
    const script = /^node -e "(.*)"$/s.exec(command)![1]!

    const bot = await createBot(h)
    const talk = await Talk.open(bot)
    for (let i = 0; i < 20; i++) await talk.say(`before ${i}`)
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++) await talk.say(`during ${i}`)
    })()
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: work })
    writing = false
    await writer
    await talk.close()
    expect(stdout.trim()).toBe('backup done')

    const copy = new Database(join(work, 'parley-backup.db'), { readonly: true })
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
      const texts = (copy.prepare('SELECT payload FROM messages').all() as Array<{ payload: string }>).map((r) => String(JSON.parse(r.payload).text))
      for (let i = 0; i < 20; i++) expect(texts).toContain(`before ${i}`)
    } finally {
      copy.close()
    }
  })
})
