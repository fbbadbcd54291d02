/**
 * Bot-turn benchmark: a user message → the reply of a sandboxed echo bot (afterIncoming sends the
 * text back) seen on the conversation's SSE stream, on the embedded store (SQLite).
 *
 * - fixed rate: open-loop pacing at BENCH_TURNS_RATE turns/s (default 500) spread over
 *   BENCH_TURNS_CONVERSATIONS conversations (default 50), for BENCH_TURNS_SECONDS (default 10) after a
 *   warm-up; latency is measured from each message's *scheduled* send time (no coordinated omission)
 *   to the moment its reply arrives on the stream; p50/p90/p99/max.
 * - maximum: closed loop, one message in flight per conversation (each conversation sends its next
 *   message when the reply to the previous one arrives), for each concurrency in
 *   BENCH_TURNS_CONCURRENCY (default "50,100"); the best throughput is the maximum.
 *
 * The server is the compiled build (`node dist/main.js`, as `npm start` runs it) in its own process,
 * with its data in a fresh directory; this process is the load generator (raw fetch + a small SSE
 * parser, so the client's own cost stays low). Targets (issue 4): p50 ≤ 5 ms, p99 ≤ 25 ms at
 * 500 turns/s, ≥ 1,500 turns/s.
 *
 * `export async function benchTurns(options?)` for bench/run.ts; `tsx bench/turns.ts` runs it
 * alone (building first unless BENCH_SKIP_BUILD=1) and prints the figures as JSON and a table.
 * BENCH_TURNS_PROFILE=0 skips the in-process count of store calls, sandbox runs and host calls per
 * turn (where the time goes). Baselines measured in the same run: a bare QuickJS call of the echo
 * hook (one VM, no worker, no store) and the sandbox alone (QuickJsSandbox.run of the echo bot
 * with a host answering at once), so that the turn figures read as ratios to what the sandbox
 * itself costs. Run alone or through `npm run bench`, it rewrites its section of bench/RESULTS.md.
 * BENCH_SERVER_LOG=<file> keeps the server's log (its stdout) there instead of dropping it.
 * Never throws because a target is missed; throws when something breaks.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { writeResultsSection } from './lib/results.js'
import { freePort } from '../test/helpers/ports.js'
import { ECHO_BOT } from '../test/helpers/echo-bot.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export { ECHO_BOT }

export interface LatencySummary {
  count: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
}

export interface FixedRateResult extends LatencySummary {
  targetPerSec: number
  seconds: number
  conversations: number
  sent: number
  /** Replies received (each turn's reply, once). */
  received: number
  lost: number
  duplicates: number
  /** createMessage calls that failed (connection refused or timed out, non-2xx). */
  errors: number
  firstError?: string
  achievedPerSec: number
  /** Server CPU during the measurement, in cores (1 = one core busy). */
  serverCpu?: number
  /** This process (the load generator) during the measurement, in cores. */
  clientCpu?: number
}

export interface ClosedLoopResult extends LatencySummary {
  conversations: number
  seconds: number
  turnsPerSec: number
  lost: number
  errors: number
  firstError?: string
  serverCpu?: number
  clientCpu?: number
}

export interface TurnsProfile {
  turns: number
  /** Store method calls per turn (user message + bot turn + reply + stream delivery), by method. */
  storeCallsPerTurn: Record<string, number>
  storeCallsPerTurnTotal: number
  sandboxRunsPerTurn: number
  hostCallsPerTurn: number
  /** Mean wall time per turn of each step, measured in process (ms). */
  meanMs: { postMessage: number; sandboxRun: number; turnToReply: number }
}

export interface TurnsResult {
  fixedRate: FixedRateResult
  /** Other fixed rates (BENCH_TURNS_EXTRA_RATES), e.g. to see the latency below saturation. */
  otherRates: FixedRateResult[]
  maxRate: ClosedLoopResult
  closedLoops: ClosedLoopResult[]
  targets: { p50Ms: number; p99Ms: number; turnsPerSec: number }
  met: { p50: boolean; p99: boolean; turnsPerSec: boolean }
  server: string
  machine: string
  /** 1-minute load average of the machine when the run started and ended (other sessions share it). */
  loadAverage: { start: number; end: number }
  profile?: TurnsProfile
  baselines?: TurnsBaselines
}

/** What the sandbox alone costs, measured in the same run (same machine state). */
export interface TurnsBaselines {
  /** One QuickJS VM on this thread calling the echo hook's logic (JSON in, JSON out): calls/s and µs per call. */
  bareQuickJs: { callsPerSec: number; usPerCall: number }
  /** QuickJsSandbox.run of the echo bot (worker pool, prelude, one createMessage host call answered at once), closed loop. */
  sandboxOnly: { concurrency: number; runsPerSec: number; p50: number; p99: number }
}

export interface TurnsOptions {
  rate: number
  extraRates: number[]
  seconds: number
  warmupSeconds: number
  conversations: number
  concurrency: number[]
  closedSeconds: number
  /** Command that starts the server (PORT, HOST, PARLEY_DATA_DIR are set in its environment). */
  serverCommand: string[]
  dataRoot: string
  logLevel: string
  profile: boolean
  log: (line: string) => void
}

const num = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}

export function defaults(): TurnsOptions {
  return {
    rate: num('BENCH_TURNS_RATE', 500),
    extraRates: (process.env.BENCH_TURNS_EXTRA_RATES || '').split(',').map((x) => Number(x.trim())).filter((n) => n > 0),
    seconds: num('BENCH_TURNS_SECONDS', 10),
    warmupSeconds: num('BENCH_TURNS_WARMUP', 2),
    conversations: num('BENCH_TURNS_CONVERSATIONS', 50),
    concurrency: (process.env.BENCH_TURNS_CONCURRENCY || '50,100').split(',').map((s) => Number(s.trim())).filter((n) => n > 0),
    closedSeconds: num('BENCH_TURNS_CLOSED_SECONDS', 8),
    // BENCH_TURNS_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": flags for the server's node (profiling it).
    serverCommand: [process.execPath, ...(process.env.BENCH_TURNS_NODE_ARGS || '').split(' ').filter(Boolean), join(ROOT, 'dist', 'main.js')],
    dataRoot: process.env.BENCH_DATA_ROOT || tmpdir(),
    logLevel: process.env.BENCH_TURNS_LOG_LEVEL || 'info',
    profile: process.env.BENCH_TURNS_PROFILE !== '0',
    log: (line) => process.stdout.write(`${line}\n`),
  }
}

// ---------------------------------------------------------------- stats

export function summarize(values: number[]): LatencySummary {
  const s = [...values].sort((a, b) => a - b)
  const at = (q: number) => (s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!)
  const round = (n: number) => Math.round(n * 100) / 100
  return {
    count: s.length,
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(s.at(-1) ?? NaN),
    mean: round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)),
  }
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()

/** CPU seconds used so far by a process and its threads (user + system), from /proc; undefined elsewhere. */
function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK
  } catch {
    return undefined
  }
}

const ownCpuSeconds = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------- the server

export interface Server {
  child: ChildProcess
  port: number
  base: string
  dataDir: string
  stderr: () => string
}

export async function startServer(o: TurnsOptions): Promise<Server> {
  const port = await freePort()
  const dataDir = mkdtempSync(join(o.dataRoot, 'parley-bench-turns-'))
  const [cmd, ...args] = o.serverCommand
  const child = spawn(cmd!, args, {
    cwd: dataDir,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir, LOG_LEVEL: o.logLevel, PARLEY_SSE_KEEPALIVE_MS: '1000' },
    stdio: ['ignore', process.env.BENCH_SERVER_LOG ? openSync(process.env.BENCH_SERVER_LOG, 'w') : 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000)
  })
  const server: Server = { child, port, base: `http://127.0.0.1:${port}`, dataDir, stderr: () => stderr }
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited during startup (code ${child.exitCode}):\n${stderr}`)
    try {
      if ((await fetch(`${server.base}/healthz`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not become ready within 30 s:\n${stderr}`)
    await sleep(100)
  }
  return server
}

export async function stopServer(server: Server): Promise<void> {
  const { child } = server
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  rmSync(server.dataDir, { recursive: true, force: true })
}

export async function json(url: string, init: RequestInit & { expect?: number[] } = {}): Promise<any> {
  const res = await fetch(url, init)
  const text = await res.text()
  if (!(init.expect ?? [200, 201]).includes(res.status)) throw new Error(`${init.method ?? 'GET'} ${url} → ${res.status}: ${text}`)
  return text ? JSON.parse(text) : undefined
}

// ---------------------------------------------------------------- conversations with a stream

/**
 * The load generator's HTTP: node:http with keep-alive rather than fetch (undici and web streams cost
 * several times more CPU per request, and this process shares the machine's two cores with the server).
 */
const agent = new Agent({ keepAlive: true, maxSockets: 1024 })

function httpRequest(url: string, options: { method?: string; headers: Record<string, string>; body?: string }): { req: ClientRequest; res: Promise<IncomingMessage> } {
  const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent })
  const res = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve)
    req.once('error', reject)
  })
  req.end(options.body)
  return { req, res }
}

/** One user, one conversation, one SSE stream; calls `onReply(text, at)` for each bot message. */
export class Conversation {
  private stream: ClientRequest | undefined
  private closed = false

  private constructor(
    readonly id: string,
    private readonly messagesUrl: string,
    private readonly headers: Record<string, string>,
  ) {}

  static async open(chatUrl: string, onReply: (text: string, at: number) => void): Promise<Conversation> {
    const { key } = (await json(`${chatUrl}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })) as { key: string }
    const headers = { 'content-type': 'application/json', 'x-user-key': key }
    const { conversation } = (await json(`${chatUrl}/conversations`, { method: 'POST', headers, body: '{}' })) as { conversation: { id: string } }
    const c = new Conversation(conversation.id, `${chatUrl}/messages`, headers)
    // Its own connection (agent: false): a stream never goes back to the keep-alive pool.
    const stream = request(`${chatUrl}/conversations/${conversation.id}/listen`, { headers: { 'x-user-key': key, accept: 'text/event-stream' }, agent: false })
    c.stream = stream
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      stream.once('response', resolve)
      stream.once('error', reject)
      stream.end()
    })
    if (res.statusCode !== 200) throw new Error(`listen → ${res.statusCode}`)
    c.read(res, onReply)
    return c
  }

  private read(res: IncomingMessage, onReply: (text: string, at: number) => void): void {
    let buffer = ''
    res.setEncoding('utf8')
    res.on('error', (err) => {
      if (!this.closed) throw err
    })
    res.on('data', (chunk: string) => {
      const at = performance.now()
      buffer += chunk
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        for (const line of frame.split('\n')) {
          if (!line.startsWith('data: ')) continue
          // cheap pre-filter: only bot messages matter
          if (!line.includes('"isBot":true')) continue
          const signal = JSON.parse(line.slice(6)) as { type: string; data: { isBot: boolean; payload: { text?: string } } }
          if (signal.type === 'message_created' && signal.data.isBot && typeof signal.data.payload.text === 'string') onReply(signal.data.payload.text, at)
        }
      }
    })
  }

  /** POSTs a text message; resolves when the server has stored it. */
  async send(text: string): Promise<void> {
    const body = JSON.stringify({ conversationId: this.id, payload: { type: 'text', text } })
    const res = await httpRequest(this.messagesUrl, { method: 'POST', headers: { ...this.headers, 'content-length': String(Buffer.byteLength(body)) }, body }).res
    res.resume()
    await new Promise((resolve) => res.once('end', resolve))
    if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`createMessage → ${res.statusCode}`)
  }

  close(): void {
    this.closed = true
    this.stream?.destroy()
  }
}

/** Tracks messages in flight by their unique text. */
export class Tracker {
  private readonly pending = new Map<string, { start: number; resolve?: () => void }>()
  readonly latencies: number[] = []
  duplicates = 0
  unknown = 0
  recording = true

  expect(text: string, start: number, resolve?: () => void): void {
    this.pending.set(text, { start, ...(resolve && { resolve }) })
  }

  reply = (text: string, at: number): void => {
    const entry = this.pending.get(text)
    if (!entry) {
      if (text.startsWith('t')) this.duplicates++
      else this.unknown++
      return
    }
    this.pending.delete(text)
    if (this.recording) this.latencies.push(at - entry.start)
    entry.resolve?.()
  }

  get inFlight(): number {
    return this.pending.size
  }

  /** Waits for outstanding replies (at most `ms`); returns how many never came. */
  async drain(ms: number): Promise<number> {
    const deadline = Date.now() + ms
    while (this.pending.size > 0 && Date.now() < deadline) await sleep(20)
    const lost = this.pending.size
    this.pending.clear()
    return lost
  }
}

async function setUp(server: Server, count: number, tracker: Tracker): Promise<Conversation[]> {
  const credentials = JSON.parse(readFileSync(join(server.dataDir, 'credentials.json'), 'utf8')) as { token: string; workspaceId: string; botId: string; chat: { webhookId: string } }
  // The demo bot becomes the echo bot (deployed like any bot: updateBot with code).
  await json(`${server.base}/v1/admin/bots/${credentials.botId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${credentials.token}`, 'x-workspace-id': credentials.workspaceId, 'content-type': 'application/json' },
    body: JSON.stringify({ code: ECHO_BOT }),
  })
  const chatUrl = `${server.base}/${credentials.chat.webhookId}`
  const conversations: Conversation[] = []
  for (let i = 0; i < count; i++) conversations.push(await Conversation.open(chatUrl, tracker.reply))
  return conversations
}

let counter = 0
export const nextText = () => `t${++counter}`

// ---------------------------------------------------------------- the two measurements

export async function fixedRate(server: Server, conversations: Conversation[], tracker: Tracker, o: TurnsOptions): Promise<FixedRateResult> {
  const interval = 1000 / o.rate
  let failures = 0
  let firstFailure = ''
  const run = async (seconds: number, record: boolean) => {
    tracker.recording = record
    const total = Math.round(seconds * o.rate)
    const t0 = performance.now() + 5
    let sent = 0
    while (sent < total) {
      const now = performance.now()
      // send everything that is due (catching up if the timer fired late)
      while (sent < total && t0 + sent * interval <= now) {
        const due = t0 + sent * interval
        const c = conversations[sent % conversations.length]!
        const text = nextText()
        tracker.expect(text, due)
        c.send(text).catch((err: unknown) => {
          failures++
          firstFailure ||= String(err instanceof Error && err.cause ? `${err.message}: ${String(err.cause)}` : err)
        })
        sent++
      }
      const next = t0 + sent * interval - performance.now()
      await new Promise<void>((resolve) => (next > 1 ? setTimeout(resolve, Math.floor(next)) : setImmediate(resolve)))
    }
    return total
  }
  await run(o.warmupSeconds, false)
  await tracker.drain(5000)
  const cpu0 = processCpuSeconds(server.child.pid)
  const own0 = ownCpuSeconds()
  const w0 = performance.now()
  tracker.latencies.length = 0
  tracker.duplicates = 0
  const sent = await run(o.seconds, true)
  const sendWall = (performance.now() - w0) / 1000
  // CPU while the load is applied (not while the backlog drains)
  const cpu1 = processCpuSeconds(server.child.pid)
  const own1 = ownCpuSeconds()
  const wall = sendWall
  // late replies are latencies, not losses: wait for the backlog (up to 30 s)
  const lost = await tracker.drain(30_000)
  const received = tracker.latencies.length
  return {
    targetPerSec: o.rate,
    seconds: o.seconds,
    conversations: conversations.length,
    sent,
    received,
    lost,
    duplicates: tracker.duplicates,
    errors: failures,
    ...(firstFailure && { firstError: firstFailure }),
    achievedPerSec: Math.round(sent / sendWall),
    ...summarize(tracker.latencies),
    ...(cpu0 !== undefined && cpu1 !== undefined && { serverCpu: Math.round(((cpu1 - cpu0) / wall) * 100) / 100 }),
    clientCpu: Math.round(((own1 - own0) / wall) * 100) / 100,
  }
}

export async function closedLoop(server: Server, conversations: Conversation[], tracker: Tracker, seconds: number): Promise<ClosedLoopResult> {
  tracker.recording = true
  tracker.latencies.length = 0
  let stop = false
  let failures = 0
  let firstFailure = ''
  const cpu0 = processCpuSeconds(server.child.pid)
  const own0 = ownCpuSeconds()
  const w0 = performance.now()
  const loops = conversations.map(async (c) => {
    while (!stop) {
      const text = nextText()
      const start = performance.now()
      const replied = new Promise<void>((resolve) => tracker.expect(text, start, resolve))
      try {
        await c.send(text)
      } catch (err) {
        failures++
        firstFailure ||= String(err)
        return
      }
      // a reply that never comes ends this loop (counted as lost below)
      const timedOut = await Promise.race([replied.then(() => false), sleep(10_000).then(() => true)])
      if (timedOut) return
    }
  })
  await sleep(seconds * 1000)
  stop = true
  const wall = (performance.now() - w0) / 1000
  const cpu1 = processCpuSeconds(server.child.pid)
  const own1 = ownCpuSeconds()
  const completed = tracker.latencies.length
  await Promise.all(loops)
  const lost = await tracker.drain(5000)
  return {
    conversations: conversations.length,
    seconds,
    turnsPerSec: Math.round(completed / wall),
    lost,
    errors: failures,
    ...(firstFailure && { firstError: firstFailure }),
    ...summarize(tracker.latencies.slice(0, completed)),
    ...(cpu0 !== undefined && cpu1 !== undefined && { serverCpu: Math.round(((cpu1 - cpu0) / wall) * 100) / 100 }),
    clientCpu: Math.round(((own1 - own0) / wall) * 100) / 100,
  }
}

// ---------------------------------------------------------------- profile (in process)

/**
 * Where the time goes: Parley in this process (tsx, SQLite in a temp dir), the store wrapped to
 * count calls, the sandbox wrapped to count runs and host calls and time them; `turns` sequential
 * echo turns through the real HTTP API and stream.
 */
async function profileTurns(turns: number): Promise<TurnsProfile> {
  const src = (p: string) => pathToFileURL(join(ROOT, 'src', p)).href
  const { buildApp } = (await import(src('app.ts'))) as typeof import('../src/app.js')
  const { loadConfig } = (await import(src('config.ts'))) as typeof import('../src/config.js')
  const { bootstrap } = (await import(src('domain/bootstrap.ts'))) as typeof import('../src/domain/bootstrap.js')
  const { MemoryPubSub } = (await import(src('pubsub/memory.ts'))) as typeof import('../src/pubsub/memory.js')
  const { createSqliteStore } = (await import(src('store/sqlite.ts'))) as typeof import('../src/store/sqlite.js')
  const { QuickJsSandbox } = (await import(src('runtime/quickjs-sandbox.ts'))) as typeof import('../src/runtime/quickjs-sandbox.js')
  const { LocalBlobStore } = (await import(src('blobs/local.ts'))) as typeof import('../src/blobs/local.js')
  type Sandbox = import('../src/runtime/sandbox.js').BotSandbox

  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-profile-'))
  const port = await freePort()
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' })
  const realStore = await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
  const calls = new Map<string, number>()
  let counting = false
  const store = new Proxy(realStore, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function' || typeof prop !== 'string') return value
      return (...args: unknown[]) => {
        if (counting) calls.set(prop, (calls.get(prop) ?? 0) + 1)
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  const inner = new QuickJsSandbox({ limits: config.sandboxLimits })
  let runs = 0
  let hostCalls = 0
  let runMs = 0
  const sandbox: Sandbox = {
    check: (code) => inner.check(code),
    close: () => inner.close(),
    async run(request, host) {
      if (counting) runs++
      const t = performance.now()
      try {
        return await inner.run(request, {
          log: (level, text) => host.log(level, text),
          call: (method, args) => {
            if (counting) hostCalls++
            return host.call(method, args)
          },
        })
      } finally {
        if (counting) runMs += performance.now() - t
      }
    },
  }
  const pubsub = new MemoryPubSub()
  const app = await buildApp({ config, store: store as typeof realStore, pubsub, blobs: new LocalBlobStore(join(dataDir, 'blobs')), sandbox, logger: false })
  await app.listen({ port, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${port}`
  try {
    const boot = await bootstrap(store as typeof realStore, dataDir, base, { demoCode: false })
    const c = boot.credentials!
    await json(`${base}/v1/admin/bots/${c.botId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${c.token}`, 'x-workspace-id': c.workspaceId, 'content-type': 'application/json' },
      body: JSON.stringify({ code: ECHO_BOT }),
    })
    const tracker = new Tracker()
    const conversation = await Conversation.open(`${base}/${c.chat.webhookId}`, tracker.reply)
    const once = async (record: boolean) => {
      const text = nextText()
      const start = performance.now()
      const replied = new Promise<void>((resolve) => tracker.expect(text, start, resolve))
      await conversation.send(text)
      const posted = performance.now() - start
      await replied
      return { posted, total: performance.now() - start, record }
    }
    for (let i = 0; i < 20; i++) await once(false) // warm-up
    await sleep(200)
    tracker.latencies.length = 0
    counting = true
    let postMs = 0
    let totalMs = 0
    for (let i = 0; i < turns; i++) {
      const r = await once(true)
      postMs += r.posted
      totalMs += r.total
    }
    await sleep(300) // let each turn's tail (state, cursor, logs) finish
    counting = false
    conversation.close()
    const perTurn = Object.fromEntries([...calls.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / turns) * 100) / 100]))
    const round = (n: number) => Math.round(n * 100) / 100
    return {
      turns,
      storeCallsPerTurn: perTurn,
      storeCallsPerTurnTotal: round([...calls.values()].reduce((a, b) => a + b, 0) / turns),
      sandboxRunsPerTurn: round(runs / turns),
      hostCallsPerTurn: round(hostCalls / turns),
      meanMs: { postMessage: round(postMs / turns), sandboxRun: round(runMs / Math.max(1, runs)), turnToReply: round(totalMs / turns) },
    }
  } finally {
    await app.close()
    await inner.close() // the app closes only a sandbox it created itself
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------- baselines

async function measureBaselines(seconds: number, concurrency: number): Promise<TurnsBaselines> {
  const src = (p: string) => pathToFileURL(join(ROOT, 'src', p)).href
  const { getQuickJS } = await import('quickjs-emscripten')
  const QuickJS = await getQuickJS()
  const vm = QuickJS.newContext()
  const fn = vm.unwrapResult(vm.evalCode(`(input) => { const e = JSON.parse(input); return JSON.stringify({ type: 'text', text: e.payload.text }) }`))
  const input = JSON.stringify({ payload: { type: 'text', text: 'hello' }, state: { user: {}, conversation: {}, bot: {} } })
  let calls = 0
  const t0 = performance.now()
  while (performance.now() - t0 < seconds * 1000) {
    for (let i = 0; i < 100; i++) {
      const arg = vm.newString(input)
      const out = vm.unwrapResult(vm.callFunction(fn, vm.undefined, arg))
      vm.getString(out)
      out.dispose()
      arg.dispose()
    }
    calls += 100
  }
  const bareMs = performance.now() - t0
  fn.dispose()
  vm.dispose()

  const { QuickJsSandbox } = (await import(src('runtime/quickjs-sandbox.ts'))) as typeof import('../src/runtime/quickjs-sandbox.js')
  const { LocalBlobStore } = (await import(src('blobs/local.ts'))) as typeof import('../src/blobs/local.js')
  const { DEFAULT_LIMITS } = (await import(src('runtime/sandbox.ts'))) as typeof import('../src/runtime/sandbox.js')
  const sandbox = new QuickJsSandbox()
  const event = (text: string) => ({
    botId: 'bench', conversationId: 'c', createdOn: new Date().toISOString(), direction: 'incoming', id: text, integration: 'chat', messageId: text,
    payload: { type: 'text', text }, preview: text, state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'u',
  })
  const host = { call: async (_method: string, args: unknown) => ({ message: { id: 'm', payload: (args as { payload: unknown }).payload } }), log: () => {} }
  const runOnce = () => sandbox.run({
    botId: 'bench', version: '1', code: ECHO_BOT, entry: 'turn', limits: DEFAULT_LIMITS,
    input: JSON.stringify({ event: event('hello'), flow: null, conversationStarted: false, budgetMs: DEFAULT_LIMITS.budgetMs }),
  }, host)
  try {
    const latencies: number[] = []
    const loop = async (until: number, record: boolean) => {
      while (performance.now() < until) {
        const t = performance.now()
        await runOnce()
        if (record) latencies.push(performance.now() - t)
      }
    }
    // Warm-up long enough for every worker to start and fill its VM pool (workers start on demand).
    const warm = performance.now() + 3000
    await Promise.all(Array.from({ length: concurrency }, () => loop(warm, false)))
    const start = performance.now()
    await Promise.all(Array.from({ length: concurrency }, () => loop(start + seconds * 1000, true)))
    const elapsed = performance.now() - start
    const summary = summarize(latencies)
    return {
      bareQuickJs: { callsPerSec: Math.round(calls / (bareMs / 1000)), usPerCall: Math.round((bareMs * 1000) / calls * 10) / 10 },
      sandboxOnly: { concurrency, runsPerSec: Math.round(latencies.length / (elapsed / 1000)), p50: summary.p50, p99: summary.p99 },
    }
  } finally {
    await sandbox.close()
  }
}

// ---------------------------------------------------------------- entry points

export async function benchTurns(overrides: Partial<TurnsOptions> = {}): Promise<TurnsResult> {
  const o = { ...defaults(), ...overrides }
  const main = o.serverCommand.at(-1)!
  if (main.endsWith('.js') && !existsSync(main)) throw new Error(`${main} is missing; run npm run build`)
  const targets = { p50Ms: 5, p99Ms: 25, turnsPerSec: 1500 }
  const loadAtStart = loadavg()[0]!

  // Each measurement on a fresh server, so that one measurement's backlog cannot affect the next.
  const atRate = async (rate: number): Promise<FixedRateResult> => {
    o.log(`bot turns: fixed rate ${rate}/s for ${o.seconds} s over ${o.conversations} conversations (after ${o.warmupSeconds} s warm-up)…`)
    const server = await startServer(o)
    try {
      const tracker = new Tracker()
      const conversations = await setUp(server, o.conversations, tracker)
      const result = await fixedRate(server, conversations, tracker, { ...o, rate })
      conversations.forEach((c) => c.close())
      if (server.child.exitCode !== null) throw new Error(`the server died during the fixed-rate run:\n${server.stderr()}`)
      o.log(`  p50 ${result.p50} ms, p90 ${result.p90} ms, p99 ${result.p99} ms, max ${result.max} ms; ${result.received}/${result.sent} replies, ${result.lost} lost, ${result.errors} failed sends; server CPU ${result.serverCpu ?? '?'} cores`)
      return result
    } finally {
      await stopServer(server)
    }
  }
  const fixed = await atRate(o.rate)
  const otherRates: FixedRateResult[] = []
  for (const rate of o.extraRates) otherRates.push(await atRate(rate))

  let server: Server
  const closedLoops: ClosedLoopResult[] = []
  for (const concurrency of o.concurrency) {
    o.log(`bot turns: closed loop, ${concurrency} conversations × 1 in flight, ${o.closedSeconds} s…`)
    server = await startServer(o)
    try {
      const tracker = new Tracker()
      const conversations = await setUp(server, concurrency, tracker)
      await closedLoop(server, conversations, tracker, Math.min(2, o.closedSeconds)) // warm-up
      const result = await closedLoop(server, conversations, tracker, o.closedSeconds)
      conversations.forEach((c) => c.close())
      if (server.child.exitCode !== null) throw new Error(`the server died during the closed-loop run:\n${server.stderr()}`)
      closedLoops.push(result)
      o.log(`  ${result.turnsPerSec} turns/s (p50 ${result.p50} ms, p99 ${result.p99} ms), ${result.lost} lost; server CPU ${result.serverCpu ?? '?'} cores, load generator ${result.clientCpu} cores`)
    } finally {
      await stopServer(server)
    }
  }
  const maxRate = closedLoops.reduce((best, r) => (r.turnsPerSec > best.turnsPerSec ? r : best), closedLoops[0]!)
  const profile = o.profile ? await profileTurns(300) : undefined
  o.log('bot turns: baselines (a bare QuickJS call; the sandbox alone)…')
  const baselines = await measureBaselines(3, Math.max(...o.concurrency))
  return {
    fixedRate: fixed,
    otherRates,
    maxRate,
    closedLoops,
    targets,
    met: {
      p50: fixed.p50 <= targets.p50Ms && fixed.lost === 0 && fixed.errors === 0,
      p99: fixed.p99 <= targets.p99Ms && fixed.lost === 0 && fixed.errors === 0,
      turnsPerSec: maxRate.turnsPerSec >= targets.turnsPerSec,
    },
    server: `${o.serverCommand.map((p) => p.replace(ROOT, '')).join(' ')} (LOG_LEVEL=${o.logLevel}, SQLite)`,
    machine: `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}`,
    loadAverage: { start: Math.round(loadAtStart * 100) / 100, end: Math.round(loadavg()[0]! * 100) / 100 },
    ...(profile && { profile }),
    baselines,
  }
}

function table(r: TurnsResult): string {
  const f = r.fixedRate
  const yes = (b: boolean) => (b ? 'met' : '**NOT met**')
  return [
    `| measurement | turns/s | p50 | p90 | p99 | max | lost | failed sends | server CPU (cores) |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...[f, ...r.otherRates].map((x) => `| fixed ${x.targetPerSec}/s (open loop), ${x.conversations} conversations, ${x.seconds} s | ${x.achievedPerSec} sent/s | ${x.p50} ms | ${x.p90} ms | ${x.p99} ms | ${x.max} ms | ${x.lost} | ${x.errors} | ${x.serverCpu ?? '?'} |`),
    ...r.closedLoops.map((c) => `| closed loop, ${c.conversations} conversations × 1 in flight | ${c.turnsPerSec} | ${c.p50} ms | ${c.p90} ms | ${c.p99} ms | ${c.max} ms | ${c.lost} | ${c.errors} | ${c.serverCpu ?? '?'} |`),
    '',
    `Targets: p50 ≤ ${r.targets.p50Ms} ms (${yes(r.met.p50)}), p99 ≤ ${r.targets.p99Ms} ms (${yes(r.met.p99)}), ≥ ${r.targets.turnsPerSec} turns/s (${yes(r.met.turnsPerSec)}: max ${r.maxRate.turnsPerSec}/s).`,
  ].join('\n')
}

/** The section of bench/RESULTS.md: figures, targets, baselines and ratios, and the command that reproduces them. */
export function resultsMarkdown(r: TurnsResult, command: string): string {
  const lines = [
    '## Bot turns (issue 4): a user message → the sandboxed echo bot\'s reply on the stream',
    '',
    `_Generated by \`${command}\` on ${new Date().toISOString()}; ${r.machine}; server: ${r.server}. Overwritten by every run._`,
    '',
    `Machine load (1-minute load average, ${r.machine.split(' ')[0]} cores) before the run ${r.loadAverage.start} (at its end, with the benchmark's own load, ${r.loadAverage.end}): ` +
      (r.loadAverage.start > 1 ? '**other processes were using the CPUs**, so these figures understate what Parley does on a quiet machine; compare the ratios to the baselines, measured under the same load.' : 'the machine was quiet.'),
    '',
    table(r),
  ]
  const b = r.baselines
  if (b) {
    const ratio = (x: number, y: number) => (y > 0 ? (x / y).toPrecision(2) : '?')
    lines.push(
      '',
      '### Baselines, measured in the same run',
      '',
      '| baseline | rate | latency | max turns/s as a ratio of it |',
      '|---|---:|---:|---:|',
      `| a bare QuickJS call of the echo logic (one VM, this thread, no worker, no store) | ${b.bareQuickJs.callsPerSec.toLocaleString('en-US')} calls/s | ${b.bareQuickJs.usPerCall} µs/call | ${ratio(r.maxRate.turnsPerSec, b.bareQuickJs.callsPerSec)} |`,
      `| the sandbox alone: QuickJsSandbox.run of the echo bot, host answering at once, ${b.sandboxOnly.concurrency} in flight | ${b.sandboxOnly.runsPerSec.toLocaleString('en-US')} runs/s | p50 ${b.sandboxOnly.p50} ms, p99 ${b.sandboxOnly.p99} ms | ${ratio(r.maxRate.turnsPerSec, b.sandboxOnly.runsPerSec)} |`,
    )
  }
  const p = r.profile
  if (p) {
    lines.push(
      '',
      `### Where a turn's work goes (in-process count over ${p.turns} sequential turns, SQLite)`,
      '',
      `- Store calls per turn (user message + bot turn + reply + stream delivery): **${p.storeCallsPerTurnTotal}** — ${Object.entries(p.storeCallsPerTurn).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
      `- Sandbox runs per turn: ${p.sandboxRunsPerTurn}; host calls per turn: ${p.hostCallsPerTurn}.`,
      `- Mean ms per turn: POST ${p.meanMs.postMessage}, sandbox run ${p.meanMs.sandboxRun}, message → reply ${p.meanMs.turnToReply}.`,
    )
  }
  lines.push('', 'Reproduce: `npm run bench -- turns` (or `tsx bench/turns.ts`; knobs `BENCH_TURNS_*` at the top of bench/turns.ts).')
  return lines.join('\n')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    process.stdout.write('building (npm run build)…\n')
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  }
  benchTurns().then(
    (result) => {
      const knobs = Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_TURNS_')).map(([k, v]) => `${k}=${v} `).join('')
      writeResultsSection('turns', resultsMarkdown(result, `${knobs}npm run bench -- turns`))
      // exit once written: nothing of the benchmark may keep the process alive
      process.stdout.write(`\n${table(result)}\n\n${JSON.stringify(result, null, 2)}\n`, () => process.exit(0))
    },
    (err: unknown) => {
      process.stderr.write(`bench/turns.ts failed: ${err instanceof Error ? err.stack : String(err)}\n`)
      process.exitCode = 1
    },
  )
}
