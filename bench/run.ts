/**
 * `npm run bench`: createMessage throughput and latency of Parley (compiled build, embedded SQLite)
 * against a bare fastify + better-sqlite3 baseline doing the same insert, in the same run.
 *
 * Each server runs in its own child process started the same way (`taskset -c 0 node <script>`);
 * autocannon runs here, pinned to core 1 when the machine has one. Writes bench/RESULTS.md.
 * Exits non-zero only when something breaks (build output missing, a server crashes, requests
 * fail, acknowledged rows are missing), never because a target was missed. Not part of `npm test`
 * (vitest only collects test/**\/*.test.ts). See bench/README.md.
 *
 * Knobs (env):
 *   BENCH_DURATION    measured seconds per server and round (10)
 *   BENCH_WARMUP      warm-up seconds before each measurement (2)
 *   BENCH_CONNECTIONS connections, one user and conversation each (50)
 *   BENCH_ROUNDS      interleaved rounds; medians are reported (3)
 *   BENCH_SERVERS     comma list of baseline, parley, parley-demo, parley-quiet (first three);
 *                     RESULTS.md is written only when baseline and parley both ran
 *   BENCH_HEALTHZ=0   skip the GET /healthz figure
 *   BENCH_SKIP_BUILD=1  benchmark dist/ as it is
 *   BENCH_DATA_ROOT   where the temporary databases go (OS tmpdir; /dev/shm takes the disk out)
 *   BENCH_QUIET_WAIT  seconds to wait before each server's round for other processes to go quiet (120; 0: never)
 *   BENCH_CPU_PROF=1  V8 CPU profiles of the servers in bench/profiles/ (see bench/tools/profile-summary.mjs)
 *   BENCH_REVISION    revision label for RESULTS.md when the tree has no .git
 */
import { spawn, execFileSync, execSync, type ChildProcess } from 'node:child_process'
import { writeResultsSection } from './lib/results.js'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, loadavg, release, tmpdir, totalmem, type as osType } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon, { type AutocannonResult } from 'autocannon'
import Database from 'better-sqlite3'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BENCH = join(ROOT, 'bench')

const num = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`)
  return value
}
const DURATION = num('BENCH_DURATION', 10)
const WARMUP = num('BENCH_WARMUP', 2)
const CONNECTIONS = num('BENCH_CONNECTIONS', 50)
const ROUNDS = Math.max(1, Math.floor(num('BENCH_ROUNDS', 3)))
const HEALTHZ = process.env.BENCH_HEALTHZ !== '0'
const HEALTHZ_CONNECTIONS = 100 // as in engineering-notes §3.2
const HEALTHZ_DURATION = 5
const CPU_PROF = process.env.BENCH_CPU_PROF === '1'
const DATA_ROOT = process.env.BENCH_DATA_ROOT || tmpdir()
const SERVERS = new Set((process.env.BENCH_SERVERS || 'baseline,parley,parley-demo').split(',').map((s) => s.trim()))
const QUIET_WAIT = num('BENCH_QUIET_WAIT', 120)
const TARGET_RATIO = 0.6
const TARGET_P99_MS = 25

// ---------------------------------------------------------------- process placement

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const TASKSET = hasTaskset()
const CORES = cpus().length
let placement = 'no taskset: servers and load generator share all cores'
if (TASKSET) {
  placement = 'server pinned with `taskset -c 0`'
  if (CORES >= 2) {
    // Keep the load generator off the server's core (all threads of this process).
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
    placement += '; autocannon (this process) pinned to core 1'
  }
}

// ---------------------------------------------------------------- servers

interface Server {
  name: string
  child: ChildProcess
  port: number
  dataDir: string
  stderr: () => string
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address ? address.port : 0
      srv.close(() => resolve(port))
    })
  })
}

async function startServer(name: string, script: string[], env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const dataDir = mkdtempSync(join(DATA_ROOT, `parley-bench-${name.replace(/\W+/g, '-')}-`))
  const nodeArgs = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', join(BENCH, 'profiles')] : []
  const argv = [process.execPath, ...nodeArgs, ...script]
  const [cmd, ...args] = TASKSET ? ['taskset', '-c', '0', ...argv] : argv
  // stdout (Parley's request log) goes to /dev/null: a pipe nobody drains would stall the server.
  // Parley's own settings from the caller's shell (PARLEY_DATABASE_URL, LOG_LEVEL, …) must not leak in.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PARLEY_|LOG_LEVEL$|PORT$|HOST$)/.test(k)))
  const child = spawn(cmd!, args, {
    cwd: dataDir,
    env: { ...inherited, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000)
  })
  const server: Server = { name, child, port, dataDir, stderr: () => stderr }
  try {
    const deadline = Date.now() + 30_000
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${name} exited during startup (code ${child.exitCode}, signal ${child.signalCode}):\n${stderr}`)
      }
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`)
        if (res.ok) break
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${name} did not become ready within 30 s:\n${stderr}`)
      await sleep(100)
    }
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
  return server
}

async function stopServer(server: Server): Promise<void> {
  const { child } = server
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`${server.name} died during the benchmark (code ${child.exitCode}, signal ${child.signalCode}):\n${server.stderr()}`)
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(timer)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()
/** CPU seconds consumed so far by a process (user, and user + system), from /proc; undefined off Linux. */
function processCpu(pid: number | undefined): { user: number; total: number } | undefined {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const user = Number(fields[11]) / CLK_TCK
    return { user, total: user + Number(fields[12]) / CLK_TCK }
  } catch {
    return undefined
  }
}

/**
 * User-mode CPU seconds of the whole machine so far (/proc/stat user+nice), undefined off Linux.
 * User time only: the kernel's own disk-writeback work, which the servers cause, is system time.
 */
function machineUserSeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!
    const [user, nice] = line.trim().split(/\s+/).slice(1).map(Number)
    return (user! + nice!) / CLK_TCK
  } catch {
    return undefined
  }
}

/** User-mode CPU seconds used by this process (autocannon) so far. */
const ownUserSeconds = () => process.cpuUsage().user / 1e6

/**
 * Other sessions' builds and test runs share this VM. Before each server's round, wait (up to
 * BENCH_QUIET_WAIT seconds) until other processes use less than a quarter of a core (user time).
 */
async function waitForQuiet(): Promise<{ quiet: boolean; waited: number; other: number }> {
  const started = Date.now()
  let other = 0
  for (;;) {
    const b0 = machineUserSeconds()
    const o0 = ownUserSeconds()
    await sleep(1000)
    const b1 = machineUserSeconds()
    if (b0 === undefined || b1 === undefined) return { quiet: true, waited: 0, other: 0 }
    other = Math.max(0, b1 - b0 - (ownUserSeconds() - o0))
    const waited = (Date.now() - started) / 1000
    if (other < 0.25) return { quiet: true, waited, other }
    if (waited >= QUIET_WAIT) return { quiet: false, waited, other }
  }
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await res.text()
  if (res.status !== 201 && res.status !== 200) throw new Error(`POST ${url} → ${res.status}: ${text}`)
  return JSON.parse(text)
}

// ---------------------------------------------------------------- load

interface Measure {
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
type Target = { url: string; perConnection: { headers: Record<string, string>; body: string }[] }

async function load(server: Server, target: Target, seconds: number, connections: number): Promise<AutocannonResult> {
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

function summarize(r: AutocannonResult, cpu?: number): Measure {
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

async function measured(server: Server, run: () => Promise<AutocannonResult>): Promise<Measure> {
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

async function healthz(server: Server): Promise<Measure> {
  const url = `http://127.0.0.1:${server.port}/healthz`
  const run = (d: number) => autocannon({ url, connections: HEALTHZ_CONNECTIONS, pipelining: 1, duration: d })
  await run(1)
  return measured(server, () => run(HEALTHZ_DURATION))
}

/** One server, one round: fresh process and database, optional hello-world figure, warm-up, measurement. */
interface RoundResult {
  healthz?: Measure
  create: Measure
  warmup2xx: number
  rows: number
}

interface Variant {
  key: string
  name: string
  /** Script and its arguments, run with `node`. */
  script: string[]
  env: Record<string, string>
  setup: (server: Server) => Promise<Target>
  countRows: (server: Server) => number
  /** Also measure GET /healthz (round 1). */
  healthz: boolean
}

async function benchRound(v: Variant, withHealthz: boolean): Promise<RoundResult> {
  if (QUIET_WAIT > 0) {
    const q = await waitForQuiet()
    if (q.waited > 1.5) {
      process.stdout.write(q.quiet
        ? `  (waited ${q.waited.toFixed(0)} s for other processes to go quiet)\n`
        : `  (machine still busy after ${q.waited.toFixed(0)} s: others use ${q.other.toFixed(2)} cores; measuring anyway)\n`)
    }
  }
  const server = await startServer(v.name, v.script, v.env)
  try {
    const target = await v.setup(server)
    const hz = withHealthz ? await healthz(server) : undefined
    const warm = WARMUP > 0 ? await load(server, target, WARMUP, CONNECTIONS) : undefined
    const create = await measured(server, () => load(server, target, DURATION, CONNECTIONS))
    await stopServer(server)
    const rows = v.countRows(server)
    process.stdout.write(`  ${v.name.padEnd(26)} createMessage ${fmt(create.reqPerSec).padStart(6)} req/s, p50 ${create.p50} ms, p99 ${create.p99} ms` +
      `${create.serverCpu !== undefined ? `, server CPU ${(create.serverCpu * 100).toFixed(0)}%` : ''}` +
      `${create.cpuPerReqUs !== undefined ? ` (${Math.round(create.cpuPerReqUs)} µs/req)` : ''}` +
      `${create.otherCpu !== undefined ? `, other processes ${create.otherCpu.toFixed(2)} cores` : ''}` +
      `${hz ? `; GET /healthz ${fmt(hz.reqPerSec)} req/s (p99 ${hz.p99} ms${hz.cpuPerReqUs !== undefined ? `, ${Math.round(hz.cpuPerReqUs)} µs/req` : ''})` : ''}\n`)
    return { ...(hz && { healthz: hz }), create, warmup2xx: warm?.['2xx'] ?? 0, rows }
  } catch (err) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL')
    throw err
  } finally {
    rmSync(server.dataDir, { recursive: true, force: true })
  }
}

const countMessages = (file: string) => () => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n
  } finally {
    db.close()
  }
}

const messageBody = (conversationId: string) =>
  JSON.stringify({ conversationId, payload: { type: 'text', text: 'Hello! I would like to know the status of my order #4521, please.' } })

interface Credentials {
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
const setupParley = (demoBot: boolean) => async (server: Server): Promise<Target> => {
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
  for (let i = 0; i < CONNECTIONS; i++) {
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

async function setupBaseline(server: Server): Promise<Target> {
  const base = `http://127.0.0.1:${server.port}`
  const perConnection: Target['perConnection'] = []
  for (let i = 0; i < CONNECTIONS; i++) {
    const id = `conv-${i}`
    await postJson(`${base}/conversations`, { id })
    perConnection.push({ headers: { 'content-type': 'application/json', 'x-user-key': `uk_bench_${i}` }, body: messageBody(id) })
  }
  const first = perConnection[0]!
  await postJson(`${base}/messages`, JSON.parse(first.body), first.headers)
  return { url: `${base}/messages`, perConnection }
}

// ---------------------------------------------------------------- report

/** How Parley was started, for the report. */
let PARLEY_COMMAND = 'node dist/main.js'

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const ms = (n: number) => `${n} ms`

function gitRevision(): string {
  if (process.env.BENCH_REVISION) return process.env.BENCH_REVISION
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'migrations', 'package.json'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty ? `${rev} (src/ has uncommitted changes)` : rev
  } catch {
    return 'unknown'
  }
}

interface VariantResult {
  variant: Variant
  rounds: RoundResult[]
  /** Medians over the rounds, metric by metric. */
  create: Measure
  healthz?: Measure
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

function medianMeasure(ms_: Measure[]): Measure {
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

function problems(results: VariantResult[]): string[] {
  const failed: string[] = []
  for (const r of results) {
    r.rounds.forEach((round, i) => {
      const m = round.create
      const where = `${r.variant.name}, round ${i + 1}`
      if (m.non2xx > 0 || m.errors > 0 || m.timeouts > 0) failed.push(`${where}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts`)
      // Rows may exceed the counted 2xx (responses in flight when autocannon stops are not counted), never fall short.
      const acknowledged = m.total2xx + round.warmup2xx
      if (round.rows < acknowledged) failed.push(`${where}: ${round.rows} rows stored but ${acknowledged} messages acknowledged`)
    })
  }
  return failed
}

function report(results: VariantResult[], startedAt: Date, loadBefore: number[], failed: string[], buildNote: string): { markdown: string; table: string } {
  const baseline = results.find((r) => r.variant.key === 'baseline')!
  const parley = results.find((r) => r.variant.key === 'parley')!
  const quiet = results.find((r) => r.variant.key === 'parley-quiet')
  const demo = results.find((r) => r.variant.key === 'parley-demo')
  const ratioOf = (r: VariantResult) => r.create.reqPerSec / baseline.create.reqPerSec
  const pairedRatios = (r: VariantResult) => r.rounds.map((round, i) => round.create.reqPerSec / baseline.rounds[i]!.create.reqPerSec)
  const ratio = ratioOf(parley)
  const ratioOk = ratio >= TARGET_RATIO
  const p99Ok = parley.create.p99 <= TARGET_P99_MS

  const cpu = (m: Measure) => (m.serverCpu === undefined ? 'n/a' : `${(m.serverCpu * 100).toFixed(0)}%`)
  const cpuPerReq = (m: Measure) => m.cpuPerReqUs
  const us = (x: number | undefined) => (x === undefined ? 'n/a' : `${Math.round(x)} µs`)
  const costRatio = (r: VariantResult) => {
    const b = cpuPerReq(baseline.create)
    const x = cpuPerReq(r.create)
    return b === undefined || x === undefined ? undefined : b / x
  }
  const spread = (r: VariantResult) => {
    const xs = r.rounds.map((x) => x.create.reqPerSec)
    return `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`
  }
  const table = [
    `| server | req/s (median) | req/s range | p50 | p99 | mean | server CPU | CPU per request | other procs | vs baseline | per-round ratio |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|`,
    ...results.map((r) => {
      const m = r.create
      const paired = r === baseline ? '—' : pairedRatios(r).map((x) => x.toFixed(2)).join(', ')
      return `| ${r.variant.name} | **${fmt(m.reqPerSec)}** | ${spread(r)} | ${ms(m.p50)} | ${ms(m.p99)} | ${m.avg.toFixed(1)} ms | ${cpu(m)} | ${us(cpuPerReq(m))} | ${m.otherCpu === undefined ? 'n/a' : m.otherCpu.toFixed(2)} | ${ratioOf(r).toFixed(2)} | ${paired} |`
    }),
  ].join('\n')
  const withHz = results.filter((r) => r.healthz)
  const hzTable = withHz.length > 0
    ? [
        `| server | req/s | p50 | p99 | server CPU | CPU per request | other procs |`,
        `|---|---:|---:|---:|---:|---:|---:|`,
        ...withHz.map((r) => {
          const h = r.healthz!
          return `| ${r.variant.name} | ${fmt(h.reqPerSec)} | ${ms(h.p50)} | ${ms(h.p99)} | ${cpu(h)} | ${us(cpuPerReq(h))} | ${h.otherCpu === undefined ? 'n/a' : h.otherCpu.toFixed(2)} |`
        }),
      ].join('\n')
    : '_skipped (BENCH_HEALTHZ=0)_'

  const cpuModel = cpus()[0]?.model ?? 'unknown'
  const verdict = (ok: boolean) => (ok ? '**met**' : '**NOT met**')
  const rowsLine = results.map((r) => `${r.variant.name} ${r.rounds.map((x) => fmt(x.rows)).join(' / ')}`).join('; ')
  const markdown = `# Benchmark results: createMessage

_Generated by \`bench/run.ts\`; overwritten by every run. Analysis and suggested optimizations: [ANALYSIS.md](ANALYSIS.md)._

## Verdict

Targets apply to **parley** (createMessage on a bot without code, i.e. the API path the baseline mirrors):

- **Parley / baseline throughput: ${ratio.toFixed(2)}** (median of rounds; paired per-round ratios ${pairedRatios(parley).map((x) => x.toFixed(2)).join(', ')}).
  Target ≥ ${TARGET_RATIO}: ${verdict(ratioOk)}.
- **Parley createMessage p99: ${ms(parley.create.p99)}**. Target ≤ ${TARGET_P99_MS} ms: ${verdict(p99Ok)}.
- Cross-check that other load on the machine skews much less than req/s: server CPU time per request, baseline ${us(cpuPerReq(baseline.create))} vs
  Parley ${us(cpuPerReq(parley.create))}: if both were CPU-bound, Parley would reach ${costRatio(parley)?.toFixed(2) ?? 'n/a'}× the baseline's throughput.${
  (baseline.create.serverCpu ?? 1) < 0.9 ? `
  The baseline did not saturate its core (${cpu(baseline.create)}: it waits on disk writes), which flatters Parley's req/s ratio.` : ''}
${demo ? `- As shipped, with the demo bot answering every message (a bot turn in the QuickJS sandbox, state reads/writes and a
  reply per message, on the same core): **${fmt(demo.create.reqPerSec)} req/s, p99 ${ms(demo.create.p99)}, ratio ${ratioOf(demo).toFixed(2)}**
  (ratio target ${verdict(ratioOf(demo) >= TARGET_RATIO)}, p99 target ${verdict(demo.create.p99 <= TARGET_P99_MS)}).${
  TASKSET ? ' Pinned to one core, the server\'s sandbox pool has a single worker thread sharing that core.' : ''}
` : ''}- For context, engineering-notes §3.3 acceptance target "≥ 5k msg POST/s on SQLite at 50 conns, p99 < 25 ms":
  Parley ${fmt(parley.create.reqPerSec)}/s, p99 ${ms(parley.create.p99)} → ${verdict(parley.create.reqPerSec >= 5000 && parley.create.p99 < 25)}.
${failed.length ? `- **Run problems (figures not trustworthy):** ${failed.join('; ')}\n` : '- Run clean: no failed requests; every acknowledged message was found in the database afterwards.\n'}
## POST a message, ${CONNECTIONS} connections, pipelining 1

${table}

Medians over ${ROUNDS} interleaved round${ROUNDS > 1 ? 's' : ''} (each round starts every server afresh, in the order
${results.map((r) => r.variant.name).join(' → ')}); "per-round ratio" pairs each Parley round with the baseline round just before it.
Rows stored per round (warm-up + measurement + setup smoke request): ${rowsLine}.

## GET /healthz (hello world, for context; ${HEALTHZ_CONNECTIONS} connections, pipelining 1, ${HEALTHZ_DURATION} s, round 1 only)

${hzTable}

## Setup

- **Command:** \`npm run bench\` (runs \`npm run build\`, then benchmarks the compiled build: \`${PARLEY_COMMAND}\`)
- **Build:** ${buildNote}
- **Date:** ${startedAt.toISOString()}
- **Revision:** ${gitRevision()}
- **Machine:** ${CORES} cores (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${osType()} ${release()};
  load average before the run ${loadBefore.map((x) => x.toFixed(2)).join(' / ')} (1/5/15 min)
- **Node:** ${process.version}; autocannon ${AUTOCANNON_VERSION} (programmatic API, in the parent process)
- **Placement:** ${placement}
- **Load:** ${WARMUP} s warm-up then ${DURATION} s measured per server per round; one user and one conversation per connection
  (${CONNECTIONS} conversations); body \`{"conversationId":…,"payload":{"type":"text","text":…}}\` (${messageBody('x').length - 1} bytes + id)
- **Store:** embedded SQLite on ${DATA_ROOT === tmpdir() ? `the OS temp dir (${tmpdir()}, same disk as a default \`./data\`)` : DATA_ROOT},
  WAL, synchronous=NORMAL, foreign_keys=ON, fresh database per server and round

## What is compared

- **parley**: the compiled build exactly as \`npm start\` runs it (\`${PARLEY_COMMAND}\`, default config: LOG_LEVEL=info; request
  lines are logged at debug, so none are written), posting to the chat webhook of a bot created without code
  through the Admin API, so no bot turn follows the message. See ANALYSIS.md for what one createMessage does.
${demo ? `- **parley + demo bot**: the same build, posting to the webhook bootstrap creates, whose bot runs the demo code: each
  message is followed (asynchronously, after the 201) by a bot turn that answers it. Replies count in "rows stored".\n` : ''}${quiet ? `- **parley (LOG_LEVEL=warn)**: like parley, without the per-request log lines.\n` : ''}- **baseline** (\`bench/baseline-server.mjs\`): bare fastify (logger off) + one cached better-sqlite3 statement: the same
  ajv-validated body, the same \`messages\` table (Parley's migration file is applied), WAL, synchronous=NORMAL,
  foreign_keys=ON, UUIDv7 ids, 201 with the message JSON through a response schema. No auth, no membership check,
  seq from an in-memory counter, one autocommit INSERT: the floor for "validate, durably insert, answer" on this box.
- Both run as \`${TASKSET ? 'taskset -c 0 ' : ''}node <script>\` in their own child process. Server CPU is the child's user+system
  time over the measured window (100% = one core saturated; below 100% the server was waiting: on disk writes, or for a
  core taken by other processes). "other procs" is the user-mode CPU (in cores) that every process except the server and
  autocannon used meanwhile, from /proc/stat: above ~0.2 the round was disturbed by other work on the machine (kernel
  disk writeback, which the servers cause, is not counted). Before each server's round the bench waits up to
  ${QUIET_WAIT} s for other processes to go quiet.
- This is a shared 2-vCPU VM: absolute figures move by tens of percent between runs (disk writeback especially);
  compare the paired ratios within one run rather than absolute numbers across runs.
`
  return { markdown, table }
}

// ---------------------------------------------------------------- main

const AUTOCANNON_VERSION = (() => {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
})()

async function main(): Promise<void> {
  const startedAt = new Date()
  const loadBefore = loadavg()
  let buildNote = 'npm run build succeeded'
  if (process.env.BENCH_SKIP_BUILD === '1') {
    buildNote = 'BENCH_SKIP_BUILD=1: benchmarked the existing dist/ without rebuilding'
  } else {
    process.stdout.write('Building Parley (npm run build)…\n')
    try {
      execSync('npm run build', { cwd: ROOT, stdio: 'inherit' })
    } catch {
      // tsc still emits JavaScript on type errors; benchmark that, but say so everywhere.
      buildNote = '**npm run build reported type errors**; tsc emitted dist/ anyway and that build was benchmarked'
      process.stdout.write('warning: npm run build reported errors; benchmarking the JavaScript tsc emitted anyway\n')
    }
  }
  // What `npm start` runs: `node dist/cli.js serve` (older builds: `node dist/main.js`).
  const cli = join(ROOT, 'dist', 'cli.js')
  const parleyMain = existsSync(cli) ? [cli, 'serve'] : [join(ROOT, 'dist', 'main.js')]
  if (!existsSync(parleyMain[0]!)) throw new Error('dist/ has neither cli.js nor main.js; run npm run build')
  PARLEY_COMMAND = `node ${parleyMain.map((a) => relative(ROOT, a) || a).join(' ')}`
  if (CPU_PROF) mkdirSync(join(BENCH, 'profiles'), { recursive: true })
  process.stdout.write(`${CORES} cores, node ${process.version}, load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')}; ${placement}\n`)
  process.stdout.write(`${CONNECTIONS} connections, pipelining 1, warm-up ${WARMUP} s, measure ${DURATION} s, ${ROUNDS} round(s), data in ${DATA_ROOT}\n`)

  const parleyRows = (s: Server) => countMessages(join(s.dataDir, 'data', 'parley.db'))()
  const all: Variant[] = [
    { key: 'baseline', name: 'baseline', script: [join(BENCH, 'baseline-server.mjs')], env: {}, setup: setupBaseline, healthz: true,
      countRows: (s) => countMessages(join(s.dataDir, 'baseline.db'))() },
    { key: 'parley', name: 'parley', script: parleyMain, env: { PARLEY_DATA_DIR: 'data' }, setup: setupParley(false), healthz: true,
      countRows: parleyRows },
    { key: 'parley-demo', name: 'parley + demo bot', script: parleyMain, env: { PARLEY_DATA_DIR: 'data' }, setup: setupParley(true),
      healthz: false, countRows: parleyRows },
    { key: 'parley-quiet', name: 'parley (LOG_LEVEL=warn)', script: parleyMain, env: { PARLEY_DATA_DIR: 'data', LOG_LEVEL: 'warn' },
      setup: setupParley(false), healthz: false, countRows: parleyRows },
  ]
  const variants = all.filter((v) => SERVERS.has(v.key))

  const rounds = new Map<Variant, RoundResult[]>(variants.map((v) => [v, []]))
  for (let round = 1; round <= ROUNDS; round++) {
    process.stdout.write(`\nRound ${round}/${ROUNDS}\n`)
    for (const v of variants) rounds.get(v)!.push(await benchRound(v, HEALTHZ && v.healthz && round === 1))
  }
  const results: VariantResult[] = variants.map((variant) => {
    const rs = rounds.get(variant)!
    const hz = rs.map((r) => r.healthz).filter((h): h is Measure => h !== undefined)
    return { variant, rounds: rs, create: medianMeasure(rs.map((r) => r.create)), ...(hz.length > 0 && { healthz: medianMeasure(hz) }) }
  })
  const failed = problems(results)

  const baseline = results.find((r) => r.variant.key === 'baseline')
  const parley = results.find((r) => r.variant.key === 'parley')
  if (!baseline || !parley) {
    for (const r of results) process.stdout.write(`${r.variant.name}: ${JSON.stringify(r.create)}\n`)
    process.stdout.write('Partial run (BENCH_SERVERS): bench/RESULTS.md not written\n')
  } else {
    const { markdown, table } = report(results, startedAt, loadBefore, failed, buildNote)
    // One level down: RESULTS.md holds every benchmark's section (bench/lib/results.ts).
    writeResultsSection('create-message', markdown.replace(/^(#+) /gm, '#$1 '))
    const ratio = parley.create.reqPerSec / baseline.create.reqPerSec
    process.stdout.write(`\n${table}\n\n`)
    process.stdout.write(`Parley/baseline ratio: ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}); ` +
      `Parley p99 ${parley.create.p99} ms (target ≤ ${TARGET_P99_MS} ms: ${parley.create.p99 <= TARGET_P99_MS ? 'met' : 'NOT met'})\n`)
    process.stdout.write('Wrote bench/RESULTS.md\n')
  }
  if (failed.length) {
    // Failed requests or lost rows mean the harness or a server is broken, not merely slow.
    process.stderr.write(`Benchmark run was not clean: ${failed.join('; ')}\n`)
    process.exitCode = 1
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
