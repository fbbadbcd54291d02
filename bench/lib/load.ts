/**
 * Shared by the benchmarks (bench/run.ts, bench/backends.ts): autocannon load on Parley's createMessage,
 * measurement with the server's CPU use, setup of users and conversations, and report helpers.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import autocannon, { type AutocannonResult } from 'autocannon'
import { machineUserSeconds, num, ownUserSeconds, postJson, processCpu, ROOT, type Server } from './servers.js'

export interface Measure {
  reqPerSec: number
  p50: number
  p99: number
  avg: number
  total2xx: number
  non2xx: number
  errors: number
  timeouts: number
  /** Server CPU use during the measurement, in cores (1.0 = one core saturated). */
  serverCpu?: number
  /** User-mode CPU used by other processes (not the server, not autocannon) during the measurement, in cores. */
  otherCpu?: number
  /** Server CPU time (all its threads) per completed request, in µs: robust to other load on the machine, unlike req/s. */
  cpuPerReqUs?: number
}

/** One conversation (with its own user key) per connection, round-robin. */
export type Target = { url: string; perConnection: { headers: Record<string, string>; body: string }[] }

export async function load(server: Server, target: Target, seconds: number, connections: number): Promise<AutocannonResult> {
  let next = 0
  return autocannon({
    url: target.url,
    method: 'POST',
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    setupClient: (client) => {
      const c = target.perConnection[next++ % target.perConnection.length]!
      client.setHeadersAndBody(c.headers, c.body)
    },
  }).then((r) => {
    if (server.child.exitCode !== null) throw new Error(`${server.name} crashed under load:\n${server.stderr()}`)
    return r
  })
}

export function summarize(r: AutocannonResult, cpu?: number): Measure {
  return {
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    avg: r.latency.average,
    total2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    ...(cpu !== undefined && { serverCpu: cpu }),
  }
}

export async function measured(server: Server, run: () => Promise<AutocannonResult>): Promise<Measure> {
  const before = processCpu(server.child.pid)
  const machineBefore = machineUserSeconds()
  const ownBefore = ownUserSeconds()
  const t0 = performance.now()
  const r = await run()
  const wall = (performance.now() - t0) / 1000
  const after = processCpu(server.child.pid)
  const machineAfter = machineUserSeconds()
  const ownUsed = ownUserSeconds() - ownBefore
  const m = summarize(r, before && after ? (after.total - before.total) / wall : undefined)
  const completed = r['2xx'] + r.non2xx
  if (before && after && completed > 0) m.cpuPerReqUs = ((after.total - before.total) / completed) * 1e6
  if (machineBefore !== undefined && machineAfter !== undefined && before && after) {
    m.otherCpu = Math.max(0, (machineAfter - machineBefore - (after.user - before.user) - ownUsed) / wall)
  }
  return m
}

export const messageBody = (conversationId: string) =>
  JSON.stringify({ conversationId, payload: { type: 'text', text: 'Hello! I would like to know the status of my order #4521, please.' } })

export interface Credentials {
  apiUrl: string
  workspaceId: string
  token: string
  chat: { webhookId: string }
}

/**
 * Users, conversations and the smoke request on a Parley chat webhook. With `demoBot` the webhook
 * is the one bootstrap created (its bot runs the demo code, which answers every message); without,
 * a bot with no code is created through the Admin API, so only the createMessage path is measured.
 */
export const setupParley = (demoBot: boolean, connections = num('BENCH_CONNECTIONS', 50)) => async (server: Server): Promise<Target> => {
  const credentials = JSON.parse(readFileSync(join(server.dataDir, 'data', 'credentials.json'), 'utf8')) as Credentials
  const origin = `http://127.0.0.1:${server.port}`
  let webhookId = credentials.chat.webhookId
  if (!demoBot) {
    const { bot } = (await postJson(`${origin}/v1/admin/bots`, { name: 'Bench bot (no code)', integrations: { chat: { enabled: true } } }, {
      authorization: `Bearer ${credentials.token}`,
      'x-workspace-id': credentials.workspaceId,
    })) as { bot: { code?: unknown; integrations: { chat?: { webhookId: string } } } }
    if (!bot.integrations.chat?.webhookId) throw new Error('the Admin API created a bot without a chat integration')
    if (bot.code != null) throw new Error('the Admin API created a bot with code; the no-bot variant would run it')
    webhookId = bot.integrations.chat.webhookId
  }
  const base = `${origin}/${webhookId}`
  const perConnection: Target['perConnection'] = []
  for (let i = 0; i < connections; i++) {
    const { key } = (await postJson(`${base}/users`, { name: `Bench user ${i}` })) as { key: string }
    const { conversation } = (await postJson(`${base}/conversations`, {}, { 'x-user-key': key })) as { conversation: { id: string } }
    perConnection.push({ headers: { 'content-type': 'application/json', 'x-user-key': key }, body: messageBody(conversation.id) })
  }
  // Smoke-check the exact request autocannon will send.
  const first = perConnection[0]!
  const created = (await postJson(`${base}/messages`, JSON.parse(first.body), first.headers)) as { message?: { id?: string } }
  if (!created.message?.id) throw new Error(`Parley createMessage answered an unexpected body: ${JSON.stringify(created)}`)
  return { url: `${base}/messages`, perConnection }
}

export const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
export const ms = (n: number) => `${n} ms`

export function gitRevision(): string {
  if (process.env.BENCH_REVISION) return process.env.BENCH_REVISION
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'migrations', 'package.json'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty ? `${rev} (src/ has uncommitted changes)` : rev
  } catch {
    return 'unknown'
  }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

export function medianMeasure(ms_: Measure[]): Measure {
  const pick = (f: (m: Measure) => number) => median(ms_.map(f))
  const cpus_ = ms_.map((m) => m.serverCpu).filter((c): c is number => c !== undefined)
  const others = ms_.map((m) => m.otherCpu).filter((c): c is number => c !== undefined)
  const perReq = ms_.map((m) => m.cpuPerReqUs).filter((c): c is number => c !== undefined)
  return {
    reqPerSec: pick((m) => m.reqPerSec),
    p50: pick((m) => m.p50),
    p99: pick((m) => m.p99),
    avg: pick((m) => m.avg),
    total2xx: ms_.reduce((a, m) => a + m.total2xx, 0),
    non2xx: ms_.reduce((a, m) => a + m.non2xx, 0),
    errors: ms_.reduce((a, m) => a + m.errors, 0),
    timeouts: ms_.reduce((a, m) => a + m.timeouts, 0),
    ...(cpus_.length > 0 && { serverCpu: median(cpus_) }),
    ...(others.length > 0 && { otherCpu: median(others) }),
    ...(perReq.length > 0 && { cpuPerReqUs: median(perReq) }),
  }
}

export const AUTOCANNON_VERSION = (() => {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
})()
