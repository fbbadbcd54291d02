/**
 * The LLM gateway's overhead (issue #28): a model call through Parley (`POST /v2/cognitive/generate-text`, and the first
 * line of `generate-text-stream`) against the same call made straight to the provider, in the same run, interleaved.
 * The provider is the LLM stand-in of the tests (test/helpers/llm-stand-in.ts: no model can run here), in this process
 * on core 1, answering at once; Parley (`node dist/cli.js serve`, PARLEY_LLM_URL at the stand-in) alone on core 0. The
 * overhead is Parley's p50 (p99) minus the direct call's: auth, validation, model resolution, the provider slot, the
 * provider request and its parsing, usage recording, the answer. Target: ≤ 1 ms at p50. Beside them, the same call
 * through a bare proxy (bench/llm-proxy-baseline.mjs, on core 0 too): what the extra HTTP hop alone costs.
 * Reproduce: `npm run bench -- llm-gateway`.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startLlmStandIn } from '../test/helpers/llm-stand-in.js'
import { gitRevision } from './lib/load.js'
import { runBenchScript } from './lib/results.js'
import { CORES, pinLoadGenerator, QUIET_WAIT, startServer, stopServer, waitForQuiet } from './lib/servers.js'

const CALLS = Number(process.env.BENCH_LLM_CALLS ?? 400)
const WARMUP = Number(process.env.BENCH_LLM_WARMUP ?? 100)
const TARGET_P50_MS = 1

interface Pair { direct: number[]; proxy: number[]; parley: number[] }
interface Figures {
  p50: number; p99: number; directP50: number; directP99: number; overheadP50: number; overheadP99: number; ratioP50: number
  /** The bare proxy (bench/llm-proxy-baseline.mjs): its p50, its overhead over the direct call, and Parley's over it. */
  proxyP50: number; proxyOverheadP50: number; beyondProxyP50: number
}
export interface LlmGatewayResult { date: string; revision: string; machine: string; placement: string; calls: number; generate: Figures; firstChunk: Figures }

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const r3 = (x: number) => Math.round(x * 1000) / 1000

function figures({ direct, proxy, parley }: Pair): Figures {
  const f = { p50: pct(parley, 50), p99: pct(parley, 99), directP50: pct(direct, 50), directP99: pct(direct, 99), proxyP50: pct(proxy, 50) }
  return {
    p50: r3(f.p50), p99: r3(f.p99), directP50: r3(f.directP50), directP99: r3(f.directP99),
    overheadP50: r3(f.p50 - f.directP50), overheadP99: r3(f.p99 - f.directP99), ratioP50: r3(f.p50 / f.directP50),
    proxyP50: r3(f.proxyP50), proxyOverheadP50: r3(f.proxyP50 - f.directP50), beyondProxyP50: r3(f.p50 - f.proxyP50),
  }
}

/** Milliseconds until the whole answer was read. */
async function whole(url: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`POST ${url} → ${res.status}: ${await res.text()}`)
  await res.arrayBuffer()
  return performance.now() - t0
}

/** Milliseconds until the first piece of text (the first chunk of the body that carries one), then the rest is read. */
async function firstPiece(url: string, body: unknown, headers: Record<string, string>, marker: string): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  if (!res.ok || !res.body) throw new Error(`POST ${url} → ${res.status}: ${await res.text()}`)
  const decoder = new TextDecoder()
  let seen = ''
  let at: number | undefined
  const reader = res.body.getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    seen += decoder.decode(value, { stream: true })
    if (at === undefined && seen.includes(marker)) at = performance.now() - t0
  }
  if (at === undefined) throw new Error(`no piece of text in the answer of ${url}: ${seen.slice(0, 300)}`)
  return at
}

async function run(): Promise<LlmGatewayResult> {
  const placement = pinLoadGenerator()
  const standIn = await startLlmStandIn(() => ({ text: 'Hello from the stand-in, a short answer' }))
  if (QUIET_WAIT > 0) await waitForQuiet()
  const server = await startServer('parley', [join(import.meta.dirname, '..', 'dist', 'cli.js'), 'serve'], {
    PARLEY_DATA_DIR: 'data', PARLEY_LLM_URL: standIn.url, PARLEY_LLM_MODELS: 'small', LOG_LEVEL: 'warn',
  })
  const proxy = await startServer('proxy', [join(import.meta.dirname, 'llm-proxy-baseline.mjs')], { UPSTREAM: standIn.url })
  try {
    const c = JSON.parse(readFileSync(join(server.dataDir, 'data', 'credentials.json'), 'utf8')) as { token: string; botId: string }
    const auth = { authorization: `Bearer ${c.token}`, 'x-bot-id': c.botId }
    const base = `http://127.0.0.1:${server.port}/v2/cognitive`
    const messages = [{ role: 'user', content: 'Say hello' }]
    const cognitive = { model: 'openai-compatible:small', messages, maxTokens: 100 }
    const openai = { model: 'small', messages, max_tokens: 100 }
    const viaProxy = `http://127.0.0.1:${proxy.port}`
    const generate: Pair = { direct: [], proxy: [], parley: [] }
    const firstChunk: Pair = { direct: [], proxy: [], parley: [] }
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const counted = i >= WARMUP
      // interleaved, in alternating order, so that drift and the order itself weigh on both sides alike
      const pairs: [keyof Pair, () => Promise<number>, () => Promise<number>][] = [
        ['direct', () => whole(`${standIn.url}/chat/completions`, openai, {}), () => firstPiece(`${standIn.url}/chat/completions`, { ...openai, stream: true }, {}, '"content":"Hello')],
        ['proxy', () => whole(viaProxy, openai, {}), () => firstPiece(viaProxy, { ...openai, stream: true }, {}, '"content":"Hello')],
        ['parley', () => whole(`${base}/generate-text`, cognitive, auth), () => firstPiece(`${base}/generate-text-stream`, cognitive, auth, '"output":"Hello')],
      ]
      // rotated each call, so that no side always follows the same one
      for (let k = 0; k < i % 3; k++) pairs.push(pairs.shift()!)
      for (const [side, g, f] of pairs) {
        const [tg, tf] = [await g(), await f()]
        if (counted) {
          generate[side].push(tg)
          firstChunk[side].push(tf)
        }
      }
    }
    await stopServer(server)
    await stopServer(proxy)
    return {
      date: new Date().toISOString(), revision: gitRevision(), machine: `${CORES} cores, Node ${process.version}`, placement, calls: CALLS,
      generate: figures(generate), firstChunk: figures(firstChunk),
    }
  } finally {
    for (const s of [server, proxy]) {
      if (s.child.exitCode === null) s.child.kill('SIGKILL')
      rmSync(s.dataDir, { recursive: true, force: true })
    }
    await standIn.close()
  }
}

function markdown(r: LlmGatewayResult, command: string): string {
  const row = (what: string, f: Figures) =>
    `| ${what} | ${f.directP50} ms | ${f.proxyP50} ms (+${f.proxyOverheadP50}) | ${f.p50} ms | **${f.overheadP50} ms** | ${f.beyondProxyP50} ms | ${f.directP99} ms | ${f.p99} ms | ${f.overheadP99} ms |`
  const met = (f: Figures) => (f.overheadP50 <= TARGET_P50_MS ? 'met' : 'NOT met')
  return [
    '## The LLM gateway\'s overhead over calling the provider directly',
    '',
    `_Generated by \`${command}\` on ${r.date} at ${r.revision}; ${r.machine}; ${r.placement}. Overwritten by every run._`,
    '',
    `- **generate-text: +${r.generate.overheadP50} ms at p50** over the direct call (target ≤ ${TARGET_P50_MS} ms: **${met(r.generate)}**); a bare proxy adds +${r.generate.proxyOverheadP50} ms, Parley ${r.generate.beyondProxyP50} ms more.`,
    `- **First streamed piece: +${r.firstChunk.overheadP50} ms at p50** (target ≤ ${TARGET_P50_MS} ms: **${met(r.firstChunk)}**); a bare proxy adds +${r.firstChunk.proxyOverheadP50} ms, Parley ${r.firstChunk.beyondProxyP50} ms more.`,
    '',
    '| call | direct p50 | bare proxy p50 | through Parley p50 | Parley\'s overhead p50 | Parley beyond the bare proxy p50 | direct p99 | through Parley p99 | overhead p99 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('generate-text (whole answer)', r.generate),
    row('generate-text-stream (first piece of text)', r.firstChunk),
    '',
    `${r.calls} calls of each kind, one at a time, after ${WARMUP} not counted; direct, through the bare proxy and through`,
    'Parley interleaved in rotating order. The provider is the tests\' LLM stand-in (OpenAI wire, JSON and SSE) in the',
    'bench\'s process, answering at once: the figures are what Parley adds (auth, validation, model resolution, the',
    'provider\'s slot, its request and answer parsing, usage recording, the answer), not a model\'s time. A direct call is',
    '`POST /v1/chat/completions` to the stand-in; through Parley, `POST /v2/cognitive/generate-text` (and `-stream`) with',
    'the bootstrap token and `x-bot-id`. The **bare proxy** (bench/llm-proxy-baseline.mjs, on Parley\'s core) forwards the',
    'direct call\'s body as it is and pipes the answer back: what the extra HTTP hop alone costs on this machine, the floor',
    'under any gateway\'s overhead.',
  ].join('\n')
}

runBenchScript({ moduleUrl: import.meta.url, section: 'llm-gateway', knobs: 'BENCH_LLM_', run, markdown })
