/**
 * The instance's log destination (src/lib/log-destination.ts): pino's asynchronous destination holding lines as bytes.
 * Lines reach the file whole and in order, multi-byte characters included, and lines still waiting when the process
 * exits are written before it ends.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { logDestination } from '../../src/lib/log-destination.js'

describe('logDestination', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-log-'))
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('writes every line whole and in order, multi-byte characters included', async () => {
    const file = join(dir, 'a.log')
    const fd = openSync(file, 'w')
    const log = pino({ base: null, timestamp: false }, logDestination(fd))
    // Bursts of lines written while earlier writes are still in flight, as a busy server's are.
    for (let burst = 0; burst < 20; burst++) {
      for (let i = 0; i < 100; i++) log.info({ burst, i, text: 'héllo — 日本語 🙂' }, 'line')
      await new Promise((resolve) => setImmediate(resolve))
    }
    // The destination writes in the background: wait until its last line is in the file.
    const read = () => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean)
    for (let waited = 0; read().length < 2000 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    closeSync(fd)
    const lines = read().map((l) => JSON.parse(l) as { burst: number; i: number; text: string })
    expect(lines).toHaveLength(2000)
    expect(lines.map((l) => l.burst * 100 + l.i)).toEqual(Array.from({ length: 2000 }, (_, n) => n))
    expect(new Set(lines.map((l) => l.text))).toEqual(new Set(['héllo — 日本語 🙂']))
  })

  it('lines still waiting when the process exits are written before it ends', () => {
    const script = `
      import pino from 'pino'
      import { logDestination } from ${JSON.stringify(new URL('../../src/lib/log-destination.ts', import.meta.url).pathname)}
      const log = pino({ base: null, timestamp: false }, logDestination())
      for (let i = 0; i < 5000; i++) log.info({ i }, 'é')
      process.exit(0)
    `
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { i: number })
    expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 5000 }, (_, n) => n))
  })
})
