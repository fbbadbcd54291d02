/**
 * Issue #24 item 11: bots allocating until they are stopped cost the server at most 400 MB of resident memory above
 * its baseline at peak, and give it back afterwards. A real `parley serve` process (its memory read from /proc:
 * VmHWM is the kernel's high-water mark of the whole process, every thread included, the sandbox's workers with
 * them) with the default limits (128 MB per bot) and 2 sandbox workers. Six bots, each allocating a different kind
 * of value until it is stopped (one of them logging, one sending what it allocates), are attacked at once, twice
 * (the second round runs on the quarantine workers: a bot stopped at a limit is a suspect).
 *
 * Memory, not time, is asserted: before the fix one bot alone grew its worker's heap to the heap's cap (768 MB,
 * QuickJS's own limit does not hold in its WebAssembly build), and these six raised the peak by 1424 MB
 * (measured); the bound the sandbox keeps now is its heaps' budget (2 workers × 128 MB + 32 MB = 288 MB) plus
 * the workers started in the meantime (measured peak +291 MB). Afterwards the RSS must come back within
 * 64 MB of the baseline: the heaps go back with their workers, but the server's own V8 heap and malloc arenas do
 * not give every page back to the system (measured: +12 MB), while a heap kept would be 128 MB or more (+240 MB before the fix). The RSS is given 30 s to come back (a terminated worker's heap is unmapped when its isolate is torn down, later on a busy machine); a failure prints the sandbox's workers and heaps (its metrics) and the kinds of resident memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { restartParley, startParley, type Harness } from '../helpers/harness.js'
import { startParleyProcess, type ParleyProcess } from '../helpers/parley-process.js'
import { MB, peakRss, statusBytes, statusKb } from '../helpers/rss.js'
import { createBot, sleep, Talk } from './helpers.js'

const BOMBS: Record<string, string> = {
  arrays: 'const a = []; for (;;) a.push(new Array(1e5).fill(1.5))',
  strings: "const a = []; for (let i = 0; ; i++) a.push('x'.repeat(1e5) + i)",
  'typed arrays': 'const a = []; for (;;) a.push(new Float64Array(1e5).fill(1.5))',
  objects: "const a = []; for (let i = 0; ; i++) a.push({ i, s: 'k' + i, o: { list: new Array(1000).fill(i) } })",
  // what crosses out of the sandbox: a log line, a host call's arguments
  'a doubling string, logged': "let s = 'x'; for (;;) { s += s; console.log(s) }",
  'a doubling string, sent': "let s = 'x'; for (;;) { s += s; await client.createMessage({ payload: { type: 'text', text: s } }).catch(() => {}) }",
}

const attacker = (body: string) => String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    if (event.payload.text.startsWith('attack')) { ${body} }
    await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
  },
}`

/** What a failure needs to be read: the sandbox's workers and heaps (its metrics), and the kinds of the process's resident memory. */
async function sandboxFigures(baseUrl: string, pid: number): Promise<string> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  const series = text.split('\n').filter((line) => /^parley_sandbox_(workers|quarantine_workers|workers_retired|heap_bytes) /.test(line))
  const kinds = (['RssAnon', 'RssFile'] as const).map((field) => `${field} ${Math.round(statusKb(pid, field) / 1024)} MB`)
  return [...series, ...kinds].join(', ')
}

describe('sandbox memory: bots allocating until stopped, in a parley serve process', () => {
  let h: Harness
  let server: ParleyProcess
  const talks: Talk[] = []

  beforeAll(async () => {
    h = await startParley({ listen: true })
    await h.stop()
    server = await startParleyProcess(h, { PARLEY_SANDBOX_WORKERS: '2' })
    for (const body of Object.values(BOMBS)) talks.push(await Talk.open(await createBot(h, attacker(body))))
    // every bot loaded, the workers started: the baseline
    for (const talk of talks) expect(await talk.askText('warm')).toEqual(['ok warm'])
  }, 120_000)

  afterAll(async () => {
    for (const talk of talks) await talk.close()
    await server?.kill()
    // the harness owns the data (its database, its data directory): started again only to remove it
    if (h) await (await restartParley(h)).close()
  }, 60_000)

  it('peak RSS ≤ 400 MB above the baseline, and back within 64 MB of it after', async () => {
    const round = (n: number) => Promise.all(talks.map(async (talk, i) => {
      await talk.say(`attack ${n}.${i}`)
      await talk.say(`after ${n}.${i}`)
      // each attack's turn is over (stopped, its conversation goes on); generous: 2 cores shared with other work
      await talk.until(() => talk.botTexts().includes(`ok after ${n}.${i}`), `the reply after attack ${n}.${i}`, 180_000)
    }))
    const { baseline, peak } = await peakRss(server.pid, async () => {
      await round(1)
      await round(2)
    })
    let after = statusBytes(server.pid, 'VmRSS')
    for (let i = 0; i < 150 && after > baseline + 64 * MB; i++) {
      await sleep(200)
      after = statusBytes(server.pid, 'VmRSS')
    }
    const figures = `baseline ${Math.round(baseline / MB)} MB, peak ${Math.round(peak / MB)} MB (+${Math.round((peak - baseline) / MB)}), after ${Math.round(after / MB)} MB (+${Math.round((after - baseline) / MB)}); ${await sandboxFigures(h.baseUrl, server.pid)}`
    console.log(`sandbox memory: ${figures}`)
    expect((peak - baseline) / MB, figures).toBeLessThanOrEqual(400)
    expect((after - baseline) / MB, figures).toBeLessThanOrEqual(64)
  }, 600_000)
})
