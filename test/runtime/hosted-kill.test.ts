/**
 * kill -9 of a Parley process running hosted code (issue #26 item 2): its bundle processes do not outlive it (their
 * IPC channel closes and the launcher exits), and the next start removes the bundle files the dead one left.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { restartParley, startParley, type Harness } from '../helpers/harness.js'
import { bundleFixture } from '../helpers/hosted-bundle.js'
import { startParleyProcess, type ParleyProcess } from '../helpers/parley-process.js'
import { createBot, sleep, Talk } from './helpers.js'

/** The processes whose parent is `pid` (from ps). */
function childrenOf(pid: number): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim()
  return out ? out.split('\n').map((l) => Number(l.trim())) : []
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('hosted code: kill -9 of the Parley process', () => {
  let h: Harness
  let server: ParleyProcess

  beforeAll(async () => {
    h = await startParley({ listen: true })
    await h.stop()
    server = await startParleyProcess(h)
  }, 60_000)

  afterAll(async () => {
    await server?.kill()
    if (h) await (await restartParley(h)).close()
  }, 60_000)

  it('leaves no bundle process running, and the next start removes the files it left', async () => {
    const bot = await createBot(h, await bundleFixture('hosted-bot.mjs', { BUNDLE_VERSION: '"v1"' }))
    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('hello')).toEqual(['v1: hello'])
    } finally {
      await talk.close()
    }
    const hostedDir = join(h.dataDir, 'hosted')
    const bundles = childrenOf(server.pid)
    expect(bundles.length, 'the bundle\'s process, a child of the server').toBeGreaterThanOrEqual(1)
    expect(readdirSync(hostedDir)).toHaveLength(1)
    await server.kill()
    const deadline = Date.now() + 10_000
    while (bundles.some(alive) && Date.now() < deadline) await sleep(100)
    expect(bundles.filter(alive), 'bundle processes still running after the server was killed').toEqual([])
    expect(readdirSync(hostedDir)).toHaveLength(1)
    const next = await restartParley(h)
    try {
      expect(existsSync(hostedDir) ? readdirSync(hostedDir) : [], 'the dead instance\'s bundle files').toEqual([])
    } finally {
      h = next
    }
  }, 120_000)
})
