/**
 * Echo turns through the official client (issue #27): `@botpress/chat` (axios for the calls, eventsource for the
 * stream) against Parley's sandboxed echo bot, and against a bare baseline in the same run
 * (bench/turns-baseline-server.mjs: fastify + SQLite + SSE + a plain JS echo, the least the same protocol work needs).
 *
 * A turn: `createMessage` → the bot's echo of that text arrives on the conversation's listener. Closed loop: each
 * conversation sends its next message once the previous echo arrived, for each concurrency in
 * BENCH_TURNS_CLIENT_CONVERSATIONS (default "1,10"): turns/s, p50 and p99. Interleaved rounds (default 3), each server
 * started afresh, baseline first; every figure is also given as a ratio of the baseline's in the same round, and the
 * verdict uses the median of those ratios (the machine changes from day to day; the ratio is what is compared).
 *
 * Placement: each server alone on core 0 (`taskset -c 0`, Parley's sandbox worker threads included), this process
 * (the clients) on core 1, so the clients' own cost (axios, zod on every signal) is the same on both sides.
 * Targets (issue #27): turns/s ≥ 0.6× the baseline's, p50 ≤ the baseline's + 1 ms (one conversation).
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadavg } from 'node:os'
import * as chat from '@botpress/chat'
import { runBenchScript } from './lib/results.js'
import { BENCH, CORES, num, pinLoadGenerator, processCpu, sleep, startServer, stopServer, waitForQuiet, QUIET_WAIT, type Server } from './lib/servers.js'
import { ECHO_BOT } from './turns.js'

const ROUNDS = Math.max(1, Math.floor(num('BENCH_TURNS_CLIENT_ROUNDS', 3)))
const SECONDS = num('BENCH_TURNS_CLIENT_SECONDS', 6)
/**
 * Seconds of turns not counted before each measurement. 10, not 2: V8's compiler threads still took ~20% of the
 * server's core 3–8 s into a run (per-thread CPU from /proc), so 2 s measured Parley while it compiled; the baseline,
 * far less code, was warm sooner. 0.29× with 2 s, 0.35× with 10 s on the same day.
 */
const WARMUP = num('BENCH_TURNS_CLIENT_WARMUP', 10)
const CONCURRENCY = (process.env.BENCH_TURNS_CLIENT_CONVERSATIONS || '1,10').split(',').map((s) => Math.max(1, Number(s.trim()) || 1))
const TARGET_RATIO = 0.6
const TARGET_P50_SLACK_MS = 1

interface Side {
  key: 'baseline' | 'parley'
  name: string
  script: string[]
  env: Record<string, string>
  /** The Chat API url (`…/<webhookId>`) once the server runs. */
  prepare(server: Server): Promise<string>
}

export interface LoopFigures {
  conversations: number
  turns: number
  turnsPerSec: number
  p50: number
  p99: number
  /** Server CPU over the measured window, in cores. */
  serverCpu: number | undefined
}

export interface TurnsClientResult {
  date: string
  machine: string
  placement: string
  rounds: { baseline: LoopFigures[]; parley: LoopFigures[] }[]
  /**
   * Per concurrency: median over rounds of parley / baseline turns/s, the medians of p50, and the medians of each
   * server's CPU per turn (µs; what a turn costs, which other load on the machine sways less than turns/s).
   */
  summary: {
    conversations: number; ratio: number; ratios: number[]; parleyPerSec: number; baselinePerSec: number; parleyP50: number; baselineP50: number
    parleyCpuUs: number | undefined; baselineCpuUs: number | undefined
  }[]
  /** The 1-minute load average before and after the run (2 cores: above ~2, other processes shared the CPUs). */
  loadAverage: { start: number; end: number }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
const round2 = (x: number) => Math.round(x * 100) / 100

/** One conversation driven by the official client: send, wait for the echo of that text, repeat. */
export class Loop {
  private waiting: { text: string; resolve: () => void } | undefined
  private constructor(private readonly client: chat.AuthenticatedClient, private readonly conversationId: string, private readonly listener: chat.SignalListener) {}

  static async open(apiUrl: string, tag: string): Promise<Loop> {
    const client = await chat.Client.connect({ apiUrl })
    const { conversation } = await client.createConversation({})
    const listener = await client.listenConversation({ id: conversation.id })
    const loop = new Loop(client, conversation.id, listener)
    listener.on('message_created', (m) => {
      const text = (m.payload as { text?: string }).text
      if (m.isBot && loop.waiting && text === loop.waiting.text) loop.waiting.resolve()
    })
    listener.on('error', (err) => process.stderr.write(`listener ${tag}: ${String((err as { message?: string }).message ?? err)}\n`))
    return loop
  }

  private counter = 0
  /** One turn; resolves with its latency in ms. */
  async turn(): Promise<number> {
    const text = `${this.conversationId.slice(-6)}-${++this.counter}`
    const t0 = performance.now()
    const echoed = new Promise<void>((resolve) => (this.waiting = { text, resolve }))
    const timeout = setTimeout(() => this.waiting?.text === text && process.stderr.write(`no echo of ${text} after 10 s\n`), 10_000)
    await this.client.createMessage({ conversationId: this.conversationId, payload: { type: 'text', text } })
    await echoed
    clearTimeout(timeout)
    return performance.now() - t0
  }

  async close(): Promise<void> {
    await this.listener.disconnect()
  }
}

async function closedLoop(server: Server, loops: Loop[], seconds: number): Promise<{ latencies: number[]; elapsed: number; serverCpu: number | undefined }> {
  const latencies: number[] = []
  const cpu0 = processCpu(server.child.pid)
  const t0 = performance.now()
  const end = t0 + seconds * 1000
  await Promise.all(loops.map(async (loop) => {
    while (performance.now() < end) latencies.push(await loop.turn())
  }))
  const elapsed = (performance.now() - t0) / 1000
  const cpu1 = processCpu(server.child.pid)
  const serverCpu = cpu0 && cpu1 ? (cpu1.total - cpu0.total) / elapsed : undefined
  return { latencies, elapsed, serverCpu }
}

async function measureSide(side: Side): Promise<LoopFigures[]> {
  if (QUIET_WAIT > 0) await waitForQuiet()
  const server = await startServer(side.name, side.script, side.env)
  const figures: LoopFigures[] = []
  try {
    const apiUrl = await side.prepare(server)
    for (const n of CONCURRENCY) {
      const loops = await Promise.all(Array.from({ length: n }, (_, i) => Loop.open(apiUrl, `${side.key}-${n}-${i}`)))
      if (WARMUP > 0) await closedLoop(server, loops, WARMUP)
      const { latencies, elapsed, serverCpu } = await closedLoop(server, loops, SECONDS)
      await Promise.all(loops.map((l) => l.close()))
      const sorted = latencies.sort((a, b) => a - b)
      const f: LoopFigures = { conversations: n, turns: sorted.length, turnsPerSec: Math.round(sorted.length / elapsed), p50: round2(pct(sorted, 50)), p99: round2(pct(sorted, 99)), serverCpu: serverCpu === undefined ? undefined : round2(serverCpu) }
      process.stdout.write(`  ${side.name.padEnd(9)} ${String(n).padStart(3)} conversation(s): ${f.turnsPerSec} turns/s, p50 ${f.p50} ms, p99 ${f.p99} ms${f.serverCpu !== undefined ? `, server CPU ${f.serverCpu}` : ''}\n`)
      figures.push(f)
    }
    await stopServer(server)
    return figures
  } catch (err) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL')
    throw err
  } finally {
    rmSync(server.dataDir, { recursive: true, force: true })
  }
}

export async function benchTurnsClient(): Promise<TurnsClientResult> {
  const placement = pinLoadGenerator()
  /** Another build's CLI (e.g. an older commit's worktree) to compare the same bench across commits. */
  const cli = process.env.BENCH_TURNS_CLIENT_CLI || join(BENCH, '..', 'dist', 'cli.js')
  const sides: Side[] = [
    {
      key: 'baseline', name: 'baseline', script: [join(BENCH, 'turns-baseline-server.mjs')], env: {},
      prepare: async (server) => `http://127.0.0.1:${server.port}/bench`,
    },
    {
      key: 'parley', name: 'parley', script: [cli, 'serve'], env: { PARLEY_DATA_DIR: 'data', ...(process.env.BENCH_TURNS_CLIENT_LOG_LEVEL && { LOG_LEVEL: process.env.BENCH_TURNS_CLIENT_LOG_LEVEL }) },
      prepare: async (server) => {
        const c = JSON.parse(readFileSync(join(server.dataDir, 'data', 'credentials.json'), 'utf8')) as { token: string; workspaceId: string; botId: string; chat: { webhookId: string } }
        const base = `http://127.0.0.1:${server.port}`
        const res = await fetch(`${base}/v1/admin/bots/${c.botId}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${c.token}`, 'x-workspace-id': c.workspaceId, 'content-type': 'application/json' },
          body: JSON.stringify({ code: ECHO_BOT }),
        })
        if (!res.ok) throw new Error(`updateBot → ${res.status}: ${await res.text()}`)
        return `${base}/${c.chat.webhookId}`
      },
    },
  ]
  const rounds: TurnsClientResult['rounds'] = []
  const loadStart = loadavg()[0]!
  for (let r = 1; r <= ROUNDS; r++) {
    process.stdout.write(`round ${r}/${ROUNDS}\n`)
    const baseline = await measureSide(sides[0]!)
    const parley = await measureSide(sides[1]!)
    rounds.push({ baseline, parley })
    await sleep(500)
  }
  const summary = CONCURRENCY.map((n, i) => {
    const ratios = rounds.map((r) => round2(r.parley[i]!.turnsPerSec / r.baseline[i]!.turnsPerSec))
    return {
      conversations: n,
      ratio: round2(median(ratios)),
      ratios,
      parleyPerSec: median(rounds.map((r) => r.parley[i]!.turnsPerSec)),
      baselinePerSec: median(rounds.map((r) => r.baseline[i]!.turnsPerSec)),
      parleyP50: round2(median(rounds.map((r) => r.parley[i]!.p50))),
      baselineP50: round2(median(rounds.map((r) => r.baseline[i]!.p50))),
      parleyCpuUs: cpuPerTurnUs(rounds.map((r) => r.parley[i]!)),
      baselineCpuUs: cpuPerTurnUs(rounds.map((r) => r.baseline[i]!)),
    }
  })
  const loadAverage = { start: round2(loadStart), end: round2(loadavg()[0]!) }
  return { date: new Date().toISOString(), machine: `${CORES} cores, Node ${process.version}`, placement, rounds, summary, loadAverage }
}

/** The median over rounds of the server's CPU per turn, in µs (undefined where /proc could not be read). */
function cpuPerTurnUs(figures: LoopFigures[]): number | undefined {
  const each = figures.filter((f) => f.serverCpu !== undefined && f.turnsPerSec > 0).map((f) => (f.serverCpu! / f.turnsPerSec) * 1e6)
  return each.length === 0 ? undefined : Math.round(median(each))
}

function markdown(r: TurnsClientResult, command: string): string {
  const best = r.summary[r.summary.length - 1]!
  const one = r.summary.find((s) => s.conversations === 1) ?? r.summary[0]!
  const lines = [
    '## Echo turns through the official client (`@botpress/chat`), against a bare baseline',
    '',
    `_Generated by \`${command}\` on ${r.date}; ${r.machine}; ${r.placement.replace('autocannon (this process)', 'the clients (this process)')}. Overwritten by every run._`,
    '',
    `- **Turns/s at ${best.conversations} conversations: ${best.ratio}× the baseline's** (median of the per-round ratios ${best.ratios.join(', ')}). Target ≥ ${TARGET_RATIO}×: **${best.ratio >= TARGET_RATIO ? 'met' : 'NOT met'}**.`,
    `- **p50 at ${one.conversations} conversation: ${one.parleyP50} ms, the baseline's ${one.baselineP50} ms** (+${round2(one.parleyP50 - one.baselineP50)} ms). Target ≤ +${TARGET_P50_SLACK_MS} ms: **${one.parleyP50 <= one.baselineP50 + TARGET_P50_SLACK_MS ? 'met' : 'NOT met'}**.`,
    ...(best.parleyCpuUs !== undefined && best.baselineCpuUs !== undefined ? [
      `- Server CPU per turn at ${best.conversations} conversations (median of rounds): Parley ${best.parleyCpuUs} µs (every thread: HTTP, store, sandbox workers), ` +
      `the baseline ${best.baselineCpuUs} µs: ${round2(best.baselineCpuUs / best.parleyCpuUs)}×. The baseline does not fill its core (its clients are its limit), ` +
      'so this ratio is below the turns/s ratio; other load on the machine sways it less.',
    ] : []),
    `- Load average (1 min, ${CORES} cores) before the run ${r.loadAverage.start}, after it ${r.loadAverage.end}` +
      (r.loadAverage.start > 1 ? ': **other processes were using the CPUs**, which sways turns/s from round to round.' : '.'),
    '',
    '| round | server | conversations | turns/s | p50 | p99 | server CPU (cores) | turns/s vs the baseline |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
  ]
  r.rounds.forEach((round, i) => {
    for (const side of ['baseline', 'parley'] as const) {
      round[side].forEach((f, j) => {
        const ratio = side === 'parley' ? round2(f.turnsPerSec / round.baseline[j]!.turnsPerSec) : 1
        lines.push(`| ${i + 1} | ${side} | ${f.conversations} | ${f.turnsPerSec} | ${f.p50} ms | ${f.p99} ms | ${f.serverCpu ?? '—'} | ${ratio} |`)
      })
    }
  })
  lines.push(
    '',
    'A turn: `createMessage` → the echo of that text on the conversation\'s listener, both through `@botpress/chat`; each',
    'conversation sends its next message when the echo arrived (closed loop). **parley**: `node dist/cli.js serve` with',
    'the default settings, its bot deployed with `updateBot({ code })` as the sandboxed echo bot of bench/turns.ts.',
    '**baseline**: bench/turns-baseline-server.mjs, fastify + better-sqlite3 (Parley\'s `messages` table, WAL,',
    'synchronous=NORMAL) + raw SSE + a plain JS echo on the next tick; no auth store, membership, sandbox, bot state,',
    'conversation lease, pub/sub or request log. Each server alone on core 0, the clients on core 1; rounds interleaved.',
  )
  return lines.join('\n')
}

runBenchScript({ moduleUrl: import.meta.url, section: 'turns-client', knobs: 'BENCH_TURNS_CLIENT_', run: benchTurnsClient, markdown })
