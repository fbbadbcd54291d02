import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { setPriority } from 'node:os'
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isHostedUrl, parseHostedUrl, type HostedRef } from '../../domain/hosted-code.js'
import { uuidv7 } from '../../lib/ids.js'
import type { MetricsRegistry } from '../../lib/metrics.js'
import type { HostedKind } from '../../store/package-store.js'
import type { TurnFailureReason } from '../../store/quality-store.js'
import type { Store } from '../../store/store.js'
import { LAUNCHER_SOURCE } from './launcher.js'
import { LogPipe, type LogLine } from './log-pipe.js'
import { CpuWindow, processUsage } from './process-usage.js'

/**
 * Hosted code (issue #26 item 2): the processes that run deployed bundles (src/domain/hosted-code.ts). One Node
 * process per bot and per integration version on each instance, started when a delivery needs it, stopped when
 * idle, swapped for the next version when a deploy changes it (the old one finishes what it holds first), watched
 * for CPU and memory, and started again after a crash with a growing wait. What it prints is its logs (the bot's,
 * or the integration's). Several instances each run their own: the delivery paths hand each event to one instance,
 * so each is handled once.
 *
 * Each process runs with Node's permission model: it may read its own directory (its bundle and the launcher)
 * and nothing else on disk, write nothing, start no process or worker, load no native addon; its environment is
 * only what it needs (BP_API_URL, BP_TOKEN: the bundle's own API key, BP_BOT_ID or BP_INTEGRATION_ID, an
 * integration's SECRET_<NAME>). It may use the network as Parley may (docs/hosted-code.md says what that means).
 */
export interface HostedSettings {
  /** Where processes call Parley (BP_API_URL). */
  apiUrl: string
  /** Resident memory a process may hold, in MB; its V8 heap gets three quarters of it. */
  memoryMb: number
  /** The part of one core a process may use, in percent, averaged over cpuWindowMs. */
  cpuPercent: number
  cpuWindowMs: number
  /** A process that was not used this long is stopped (it starts again with the next delivery). */
  idleMs: number
  /** A process that has not said it listens this long after it was started is stopped. */
  startTimeoutMs: number
  /** The most processes this instance runs at once: past it the least recently used idle one is stopped first. */
  maxProcesses: number
  /** The directory the bundles are written to (this instance's: its own subdirectory is made in it). */
  dir: string
}

/** A process that cannot take a request now (no bundle, restarting after a crash, failed to start): retried by the delivery rules. */
export class HostedUnavailable extends Error {
  readonly code = 'EHOSTEDCODE'
}

export interface HostedTarget {
  url: string
  headers: Record<string, string>
  /** The request is over (the process may be stopped once it holds none). */
  release(): void
  /** Whether the process ended (crashed, or was stopped at a limit) during the request: asked after a network error, it waits a little for the exit to be seen. */
  ended(): Promise<boolean>
}

export interface HostedResolver {
  resolve(url: string): Promise<HostedTarget>
}

const WATCH_MS = 1000
/** The OS priority (nice) of hosted processes. */
const HOSTED_NICE = 5
const BACKOFF_MS = 1000
const MAX_BACKOFF_MS = 60_000
/** A process that ran this long before it crashed starts again after the shortest wait. */
const HEALTHY_MS = 60_000
const LOG_LINES_PER_WINDOW = 200
const LOG_WINDOW_MS = 10_000
/** How long a network error waits for its process's exit to be seen (it may come just after the connection closed). */
const EXIT_SEEN_MS = 500
/** How long a process told to stop (SIGTERM) has before it is killed. */
const STOP_GRACE_MS = 3000

type StopReason = 'idle' | 'replaced' | 'shutdown' | 'cpu' | 'memory' | 'start timeout'

interface Proc {
  key: string
  kind: HostedKind
  ownerId: string
  version: string
  secret: string
  child: ChildProcess | undefined
  port: number
  ready: Promise<void>
  inFlight: number
  lastUsed: number
  startedAt: number
  dir: string
  logs: LogPipe
  cpu: CpuWindow
  stopping: { reason: StopReason; detail: string } | undefined
  /** Why it is draining (it stops once its requests are over). */
  drain: string | undefined
  exited: Promise<void>
}

export class HostedProcesses implements HostedResolver {
  private readonly live = new Map<string, Proc>()
  private readonly draining = new Set<Proc>()
  private readonly crashes = new Map<string, { count: number; notBefore: number }>()
  private readonly dir: string
  private readonly watch: NodeJS.Timeout
  private closed = false
  private readonly counts = { started: 0, crashed: 0, cpu: 0, memory: 0 }

  constructor(
    private readonly store: Store,
    private readonly settings: HostedSettings,
    private readonly clock: () => number = Date.now,
  ) {
    // Its own directory: `<pid>.<random>` (several instances may share a data directory, and a process).
    this.dir = join(settings.dir, `${process.pid}.${randomBytes(4).toString('hex')}`)
    removeLeftovers(settings.dir)
    this.watch = setInterval(() => this.check(), WATCH_MS)
    this.watch.unref()
  }

  async resolve(url: string): Promise<HostedTarget> {
    const ref = parseHostedUrl(url)
    if (!ref) throw new HostedUnavailable(`${url.slice(0, 100)} is not a hosted code address`)
    if (this.closed) throw new HostedUnavailable('The instance is stopping')
    const key = `${ref.kind}:${ref.ownerId}`
    let proc = this.live.get(key)
    // uuidv7 versions sort by time: a newer deploy replaces the process; an older url (read before the deploy) uses it.
    if (proc && ref.version > proc.version) {
      this.retire(proc, 'a new version was deployed')
      proc = undefined
    }
    if (!proc) {
      const crash = this.crashes.get(key)
      const wait = crash ? crash.notBefore - this.clock() : 0
      if (wait > 0) throw new HostedUnavailable(`its hosted code is starting again after a crash, in ${Math.ceil(wait / 1000)} s`)
      this.makeRoom()
      proc = this.launch(ref)
      this.live.set(key, proc)
    }
    proc.inFlight++
    try {
      await proc.ready
    } catch (err) {
      proc.inFlight--
      throw err
    }
    proc.lastUsed = this.clock()
    const held = proc
    let released = false
    return {
      url: `http://127.0.0.1:${proc.port}/`,
      headers: { 'x-parley-hosted': proc.secret },
      release: () => {
        if (released) return
        released = true
        held.inFlight--
        held.lastUsed = this.clock()
        if (held.inFlight === 0 && this.draining.has(held)) this.stop(held, 'replaced', held.drain ?? 'replaced')
      },
      ended: async () => {
        let timer: NodeJS.Timeout | undefined
        const seen = await Promise.race([held.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), EXIT_SEEN_MS)))])
        clearTimeout(timer)
        return seen
      },
    }
  }

  /**
   * Keeps the processes under maxProcesses: the least recently used idle one is stopped to make room; when every
   * one is busy the request waits (HostedUnavailable: the delivery rules retry it), so many bots of one tenant cannot
   * exhaust the machine's memory.
   */
  private makeRoom(): void {
    if (this.live.size + this.draining.size < this.settings.maxProcesses) return
    const idle = [...this.live.values()].filter((p) => p.inFlight === 0 && !p.stopping).sort((a, b) => a.lastUsed - b.lastUsed)[0]
    if (!idle) throw new HostedUnavailable(`every hosted code process of this instance is busy (PARLEY_HOSTED_MAX_PROCESSES, ${this.settings.maxProcesses})`)
    this.stop(idle, 'idle', `room was needed for another bot's or integration's process (PARLEY_HOSTED_MAX_PROCESSES, ${this.settings.maxProcesses})`)
  }

  /** Starts the process of an owner's deployed bundle (whatever version is stored now). */
  private launch(ref: HostedRef): Proc {
    const key = `${ref.kind}:${ref.ownerId}`
    const proc: Proc = {
      key, kind: ref.kind, ownerId: ref.ownerId, version: ref.version, secret: randomBytes(24).toString('base64url'), child: undefined, port: 0,
      ready: Promise.resolve(), inFlight: 0, lastUsed: this.clock(), startedAt: this.clock(), dir: '', cpu: new CpuWindow(this.settings.cpuWindowMs),
      logs: new LogPipe({ linesPerWindow: LOG_LINES_PER_WINDOW, windowMs: LOG_WINDOW_MS, clock: this.clock, write: (lines) => this.writeLogs(ref.kind, ref.ownerId, lines) }),
      stopping: undefined, drain: undefined, exited: Promise.resolve(),
    }
    proc.ready = this.spawnProc(proc).catch((err: unknown) => {
      if (this.live.get(key) === proc) this.live.delete(key)
      throw err
    })
    proc.ready.catch(() => {})
    return proc
  }

  private async spawnProc(proc: Proc): Promise<void> {
    const bundle = await this.store.packages.getBundle(proc.kind, proc.ownerId)
    if (!bundle) throw new HostedUnavailable(`no bundle is deployed for this ${proc.kind}`)
    proc.version = bundle.version
    const env: Record<string, string> = {
      BP_API_URL: this.settings.apiUrl, BP_TOKEN: bundle.token, NODE_ENV: 'production', PARLEY_HOSTED_SECRET: proc.secret,
    }
    if (proc.kind === 'bot') env.BP_BOT_ID = proc.ownerId
    else {
      env.BP_INTEGRATION_ID = proc.ownerId
      for (const [name, value] of Object.entries(await this.store.integrations.getSecrets(proc.ownerId))) env[`SECRET_${name}`] = value
    }
    proc.dir = join(this.dir, `${proc.kind}-${proc.ownerId}-${bundle.version}`)
    mkdirSync(proc.dir, { recursive: true, mode: 0o700 })
    writeFileSync(join(proc.dir, 'launcher.cjs'), LAUNCHER_SOURCE, { mode: 0o600 })
    writeFileSync(join(proc.dir, 'bundle.cjs'), bundle.code, { mode: 0o600 })
    const heapMb = Math.max(16, Math.floor((this.settings.memoryMb * 3) / 4))
    const child = spawn(process.execPath, [
      '--experimental-permission', `--allow-fs-read=${proc.dir}`, '--disable-warning=ExperimentalWarning', `--max-old-space-size=${heapMb}`,
      join(proc.dir, 'launcher.cjs'), join(proc.dir, 'bundle.cjs'),
    ], { cwd: proc.dir, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    proc.child = child
    proc.startedAt = this.clock()
    // Below Parley's own priority: a bundle busy with CPU (within its limit) does not slow the server's requests.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, HOSTED_NICE)
      } catch {
        // not permitted here: the CPU limit still holds
      }
    }
    this.counts.started++
    proc.logs.attach(child.stdout!, 'info')
    proc.logs.attach(child.stderr!, 'error')
    proc.exited = new Promise((resolve) => child.once('exit', (code, signal) => {
      this.exited(proc, code, signal)
      resolve()
    }))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.stop(proc, 'start timeout', `it did not listen within ${this.settings.startTimeoutMs / 1000} s`)
        reject(new HostedUnavailable(`its hosted code did not start within ${this.settings.startTimeoutMs / 1000} s`))
      }, this.settings.startTimeoutMs)
      child.on('message', (message: { type?: unknown; port?: unknown }) => {
        if (message?.type !== 'listening' || typeof message.port !== 'number' || proc.port !== 0) return
        clearTimeout(timer)
        proc.port = message.port
        proc.logs.note('info', `Hosted code started (version ${proc.version}, process ${child.pid})`)
        resolve()
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new HostedUnavailable(`its hosted code exited during start-up (${exitText(code, signal)}): see its logs`))
      })
      child.once('error', (err) => {
        clearTimeout(timer)
        reject(new HostedUnavailable(`its hosted code could not be started: ${err.message}`))
      })
    })
  }

  /** Tells a process to stop (SIGTERM; killed after STOP_GRACE_MS, or at once for a limit). */
  private stop(proc: Proc, reason: StopReason, detail: string): void {
    if (proc.stopping || !proc.child) return
    proc.stopping = { reason, detail }
    if (this.live.get(proc.key) === proc) this.live.delete(proc.key)
    const child = proc.child
    const limit = reason === 'cpu' || reason === 'memory' || reason === 'start timeout'
    child.kill(limit ? 'SIGKILL' : 'SIGTERM')
    if (!limit) setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), STOP_GRACE_MS).unref()
  }

  private exited(proc: Proc, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.live.get(proc.key) === proc) this.live.delete(proc.key)
    this.draining.delete(proc)
    rmSync(proc.dir, { recursive: true, force: true })
    const ran = this.clock() - proc.startedAt
    const stopping = proc.stopping
    if (stopping && (stopping.reason === 'idle' || stopping.reason === 'replaced' || stopping.reason === 'shutdown')) {
      proc.logs.note('info', `Hosted code stopped (${stopping.detail})`)
    } else {
      // A crash, a limit or a failed start: the next start waits, longer after each one in a row.
      const previous = this.crashes.get(proc.key)
      const count = previous && ran < HEALTHY_MS ? previous.count + 1 : 1
      const waitMs = Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** (count - 1))
      this.crashes.set(proc.key, { count, notBefore: this.clock() + waitMs })
      const why = stopping ? `stopped: ${stopping.detail}` : `exited (${exitText(code, signal)}) after ${Math.round(ran / 1000)} s`
      proc.logs.note('error', `Hosted code ${why}; it starts again with the next request, in ${waitMs / 1000} s at the soonest`)
      const reason: TurnFailureReason = stopping?.reason === 'memory' ? 'memory' : stopping?.reason === 'cpu' ? 'timeout' : 'crashed'
      if (stopping?.reason === 'cpu') this.counts.cpu++
      else if (stopping?.reason === 'memory') this.counts.memory++
      else this.counts.crashed++
      if (proc.kind === 'bot') {
        void this.store.quality.recordTurnFailure({ botId: proc.ownerId, sourceId: `hosted:${uuidv7()}`, conversationId: null, kind: 'hosted', reason, createdAt: this.clock() }).catch(() => {})
      }
    }
    void proc.logs.close()
  }

  /** Every WATCH_MS: limits (CPU over the window, resident memory), idle processes. */
  private check(): void {
    const now = this.clock()
    for (const proc of [...this.live.values(), ...this.draining]) {
      const pid = proc.child?.pid
      if (pid === undefined || proc.stopping || proc.port === 0) continue
      const usage = processUsage(pid)
      if (usage) {
        proc.cpu.add(now, usage.cpuMs)
        const cpu = proc.cpu.share()
        if (usage.rssBytes > this.settings.memoryMb * 1024 * 1024) {
          this.stop(proc, 'memory', `it held ${Math.round(usage.rssBytes / 1048576)} MB of memory (the limit is ${this.settings.memoryMb} MB, PARLEY_HOSTED_MEMORY_MB)`)
          continue
        }
        if (cpu && cpu.share * 100 > this.settings.cpuPercent) {
          this.stop(proc, 'cpu', `it used ${(cpu.cpuMs / 1000).toFixed(1)} s of CPU in ${(cpu.spanMs / 1000).toFixed(1)} s (the limit is ${this.settings.cpuPercent} % of a core, PARLEY_HOSTED_CPU_PERCENT)`)
          continue
        }
      }
      if (proc.inFlight === 0 && this.live.get(proc.key) === proc && now - proc.lastUsed >= this.settings.idleMs) {
        this.stop(proc, 'idle', `not used for ${Math.round(this.settings.idleMs / 1000)} s`)
      }
    }
  }

  private async writeLogs(kind: HostedKind, ownerId: string, lines: LogLine[]): Promise<void> {
    if (kind === 'bot') {
      await this.store.appendBotLogs(lines.map((l) => ({ id: uuidv7(), botId: ownerId, at: l.at, level: l.level, message: l.message, conversationId: null })))
      return
    }
    await this.store.integrations.appendLogs(lines.map((l) => ({ id: uuidv7(), definitionId: ownerId, botId: null, at: l.at, level: l.level, message: l.message, conversationId: null })))
  }

  /**
   * A bot changed (on every instance): its process stops at once when the bot is gone or no longer runs its bundle
   * (a Parley module or a url replaced it); a new version of the bundle swaps it at the next request (resolve).
   */
  async ownerChanged(kind: HostedKind, ownerId: string): Promise<void> {
    const proc = this.live.get(`${kind}:${ownerId}`)
    if (!proc || kind !== 'bot') return
    const bot = await this.store.getBot(ownerId).catch(() => undefined)
    if (bot && isHostedUrl(bot.url)) return
    this.retire(proc, bot ? 'the bot no longer runs its bundle' : 'the bot was deleted')
  }

  /** Takes no new request; stops once the ones it holds are over. */
  private retire(proc: Proc, why: string): void {
    if (this.live.get(proc.key) === proc) this.live.delete(proc.key)
    this.draining.add(proc)
    proc.drain = why
    if (proc.inFlight === 0) this.stop(proc, 'replaced', why)
  }

  /** Processes running now (metrics, tests). */
  running(): Array<{ kind: HostedKind; ownerId: string; version: string; pid: number | undefined }> {
    return [...this.live.values(), ...this.draining].map((p) => ({ kind: p.kind, ownerId: p.ownerId, version: p.version, pid: p.child?.pid }))
  }

  registerMetrics(metrics: MetricsRegistry): void {
    metrics.collect('parley_hosted_processes', 'Processes running deployed bundles on this instance (hosted code)', () => this.live.size + this.draining.size)
    metrics.collect('parley_hosted_starts_total', 'Hosted code processes started on this instance', () => this.counts.started, 'counter')
    metrics.collect('parley_hosted_stops_total', 'Hosted code processes that crashed or were stopped at a limit, by why',
      () => [{ labels: { why: 'crashed' }, value: this.counts.crashed }, { labels: { why: 'cpu' }, value: this.counts.cpu }, { labels: { why: 'memory' }, value: this.counts.memory }], 'counter')
  }

  /** Stops every process (the instance shuts down); resolves once they are gone and their logs written. */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.watch)
    const all = [...this.live.values(), ...this.draining]
    for (const proc of all) this.stop(proc, 'shutdown', 'the instance stopped')
    await Promise.all(all.map(async (proc) => {
      await proc.exited
      await proc.logs.close()
    }))
    rmSync(this.dir, { recursive: true, force: true })
  }
}

function exitText(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `code ${code}`
}

/** Bundle directories of instances that are gone (a crash left them): `<pid>.<random>`, one per instance. */
function removeLeftovers(dir: string): void {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return
  }
  for (const entry of entries) {
    const pid = Number(entry.split('.')[0])
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue
    try {
      process.kill(pid, 0)
    } catch {
      rmSync(join(dir, entry), { recursive: true, force: true })
    }
  }
}
