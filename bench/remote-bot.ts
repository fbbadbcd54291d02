/**
 * Remote-bot benchmark: a user message → the reply of an unchanged @botpress/sdk echo bot
 * (bench/sdk-echo-bot.mjs, its own process, its url set with updateBot) seen on the conversation's
 * SSE stream, next to the same echo run in the sandbox, in the same run, with the same load
 * generator (bench/turns.ts's raw HTTP client and SSE parser).
 *
 * For each path (sandbox, remote) on a fresh server (`node dist/main.js`, SQLite):
 * - latency: open loop at BENCH_REMOTE_RATE turns/s (default 50, below either path's saturation) over 50 conversations for
 *   BENCH_REMOTE_SECONDS (default 8) after a warm-up; p50/p99 from each message's scheduled send time;
 * - throughput: closed loop, BENCH_REMOTE_CONVERSATIONS conversations (default 50) × 1 in flight.
 * Targets (issue 14): p50 overhead ≤ 2 ms over the sandboxed path; ≥ 1,000 remote turns/s with 50
 * conversations. Rewrites its section of bench/RESULTS.md; never throws because a target is missed.
 */
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runBenchScript } from './lib/results.js'
import { startSdkProgram } from './lib/servers.js'
import {
  closedLoop, Conversation, defaults, ECHO_BOT, fixedRate, json, startServer, stopServer, Tracker,
  type ClosedLoopResult, type FixedRateResult, type Server, type TurnsOptions,
} from './turns.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const num = (name: string, fallback: number) => {
  const raw = process.env[name]
  const v = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`)
  return v
}

interface PathResult { path: 'sandbox' | 'remote'; latency: FixedRateResult; throughput: ClosedLoopResult; botCpu?: number }


async function startSdkEcho(apiUrl: string, token: string, botId: string): Promise<{ child: ChildProcess; url: string }> {
  return startSdkProgram('the SDK bot', join(ROOT, 'bench', 'sdk-echo-bot.mjs'), { BP_API_URL: apiUrl, BP_TOKEN: token, BP_BOT_ID: botId })
}

/** Deploys the echo on the server's demo bot: sandbox code, or the SDK program's url. */
async function deploy(server: Server, path: 'sandbox' | 'remote'): Promise<{ chatUrl: string; bot?: ChildProcess }> {
  const c = JSON.parse(readFileSync(join(server.dataDir, 'credentials.json'), 'utf8')) as { token: string; workspaceId: string; botId: string; chat: { webhookId: string } }
  const headers = { authorization: `Bearer ${c.token}`, 'x-workspace-id': c.workspaceId, 'content-type': 'application/json' }
  const chatUrl = `${server.base}/${c.chat.webhookId}`
  if (path === 'sandbox') {
    await json(`${server.base}/v1/admin/bots/${c.botId}`, { method: 'PUT', headers, body: JSON.stringify({ code: ECHO_BOT }) })
    return { chatUrl }
  }
  const key = (await json(`${server.base}/v1/admin/bots/baks`, { method: 'POST', headers, body: JSON.stringify({ botId: c.botId, note: 'bench' }) })) as { value: string }
  const sdkBot = await startSdkEcho(server.base, key.value, c.botId)
  await json(`${server.base}/v1/admin/bots/${c.botId}`, { method: 'PUT', headers, body: JSON.stringify({ url: sdkBot.url }) })
  return { chatUrl, bot: sdkBot.child }
}

const cpuOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

async function measure(o: TurnsOptions, path: 'sandbox' | 'remote', rate: number, seconds: number, conversations: number): Promise<PathResult> {
  const open = async () => {
    const server = await startServer(o)
    const deployed = await deploy(server, path)
    return { server, ...deployed }
  }
  const close = async (s: { server: Server; bot?: ChildProcess }) => {
    s.bot?.kill('SIGKILL')
    await stopServer(s.server)
  }
  o.log(`remote-bot bench: ${path}, fixed ${rate}/s over 50 conversations, ${seconds} s…`)
  let s = await open()
  let latency: FixedRateResult
  try {
    const tracker = new Tracker()
    const convs = await Promise.all(Array.from({ length: 50 }, () => Conversation.open(s.chatUrl, tracker.reply)))
    latency = await fixedRate(s.server, convs, tracker, { ...o, rate, seconds })
    convs.forEach((c) => c.close())
  } finally {
    await close(s)
  }
  o.log(`  p50 ${latency.p50} ms, p99 ${latency.p99} ms, ${latency.lost} lost`)
  o.log(`remote-bot bench: ${path}, closed loop ${conversations} conversations × 1 in flight, ${o.closedSeconds} s…`)
  s = await open()
  let throughput: ClosedLoopResult
  let botCpu: number | undefined
  try {
    const tracker = new Tracker()
    const convs = await Promise.all(Array.from({ length: conversations }, () => Conversation.open(s.chatUrl, tracker.reply)))
    await closedLoop(s.server, convs, tracker, 2)
    const b0 = cpuOf(s.bot?.pid)
    throughput = await closedLoop(s.server, convs, tracker, o.closedSeconds)
    const b1 = cpuOf(s.bot?.pid)
    if (b0 !== undefined && b1 !== undefined) botCpu = Math.round(((b1 - b0) / o.closedSeconds) * 100) / 100
    convs.forEach((c) => c.close())
  } finally {
    await close(s)
  }
  o.log(`  ${throughput.turnsPerSec} turns/s (p50 ${throughput.p50} ms, p99 ${throughput.p99} ms), ${throughput.lost} lost; server CPU ${throughput.serverCpu ?? '?'}, bot CPU ${botCpu ?? '-'}`)
  return { path, latency, throughput, ...(botCpu !== undefined && { botCpu }) }
}

export async function benchRemoteBot() {
  const o = { ...defaults(), warmupSeconds: 2, closedSeconds: num('BENCH_REMOTE_CLOSED_SECONDS', 6) }
  const rate = num('BENCH_REMOTE_RATE', 50)
  const seconds = num('BENCH_REMOTE_SECONDS', 8)
  const conversations = num('BENCH_REMOTE_CONVERSATIONS', 50)
  const load = loadavg()[0]!
  const sandbox = await measure(o, 'sandbox', rate, seconds, conversations)
  const remote = await measure(o, 'remote', rate, seconds, conversations)
  return {
    sandbox, remote, rate, conversations,
    overheadP50: Math.round((remote.latency.p50 - sandbox.latency.p50) * 100) / 100,
    machine: `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}`,
    loadAverage: { start: Math.round(load * 100) / 100, end: Math.round(loadavg()[0]! * 100) / 100 },
  }
}

type Result = Awaited<ReturnType<typeof benchRemoteBot>>

/**
 * What the machine allows at most: the SDK bot's own CPU per turn (its process, measured in the closed
 * loop) and Parley's, on this machine's cores. Throughput cannot pass cores / (bot + server CPU per turn),
 * nor cores / (bot CPU per turn) even were Parley's share zero.
 */
function ceiling(r: Result): string[] {
  const t = r.remote.throughput
  if (r.remote.botCpu === undefined || t.serverCpu === undefined || t.turnsPerSec === 0) return []
  const cores = cpus().length
  const botMs = (r.remote.botCpu / t.turnsPerSec) * 1000
  const serverMs = (t.serverCpu / t.turnsPerSec) * 1000
  const round = (n: number) => Math.round(n)
  return [
    '',
    `Ceiling on this machine: the SDK bot alone spends ${botMs.toFixed(2)} ms of CPU per turn, so ${cores} cores allow at most ` +
      `${round((cores * 1000) / botMs)} turns/s even if Parley's own share were zero, and ${round((cores * 1000) / (botMs + serverMs))} turns/s ` +
      `with Parley's measured ${serverMs.toFixed(2)} ms per turn.`,
  ]
}

export function resultsMarkdown(r: Result, command: string): string {
  const perTurn = (cores: number | undefined, p: PathResult) => (cores === undefined || p.throughput.turnsPerSec === 0 ? '-' : `${Math.round((cores / p.throughput.turnsPerSec) * 1000 * 100) / 100} ms`)
  const row = (p: PathResult) => `| ${p.path === 'sandbox' ? 'sandboxed echo (QuickJS)' : 'remote @botpress/sdk echo (its url)'} | ${p.latency.p50} ms | ${p.latency.p99} ms | ${p.latency.lost} | ${p.throughput.turnsPerSec} | ${p.throughput.p50} ms | ${p.throughput.p99} ms | ${p.throughput.lost} | ${p.throughput.serverCpu ?? '?'} (${perTurn(p.throughput.serverCpu, p)}/turn) | ${p.botCpu ?? '-'} (${perTurn(p.botCpu, p)}/turn) |`
  const met = (b: boolean) => (b ? 'met' : '**NOT met**')
  return [
    '## Remote bots (issue 14): a user message → an @botpress/sdk echo bot\'s reply on the stream, next to the sandboxed echo',
    '',
    `_Generated by \`${command}\` on ${new Date().toISOString()}; ${r.machine}; server: node dist/main.js (SQLite), the SDK bot in its own process on the same machine. Overwritten by every run._`,
    '',
    `Machine load (1-minute load average) before the run ${r.loadAverage.start}, at its end ${r.loadAverage.end}.`,
    '',
    `| path | p50 at ${r.rate}/s | p99 at ${r.rate}/s | lost | closed loop, ${r.conversations} conversations: turns/s | p50 | p99 | lost | server CPU, cores (CPU per turn) | bot process CPU, cores (per turn) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    row(r.sandbox),
    row(r.remote),
    '',
    `Targets: p50 overhead ≤ 2 ms over the sandboxed path (${r.overheadP50 < 0 ? '**not judged**: the sandboxed path came out slower, so this run\'s noise exceeds the difference' : met(r.overheadP50 <= 2)}: ${r.overheadP50} ms); ≥ 1,000 remote turns/s with ${r.conversations} conversations (${met(r.remote.throughput.turnsPerSec >= 1000)}: ${r.remote.throughput.turnsPerSec}/s).`,
    ...ceiling(r),
    '',
    'Reproduce: `npm run bench -- remote-bot` (or `tsx bench/remote-bot.ts`; knobs `BENCH_REMOTE_*` at the top of bench/remote-bot.ts).',
  ].join('\n')
}

runBenchScript({ moduleUrl: import.meta.url, section: 'remote-bot', knobs: 'BENCH_REMOTE_', run: benchRemoteBot, markdown: resultsMarkdown })
