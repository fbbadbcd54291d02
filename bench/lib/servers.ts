/**
 * Shared by the benchmarks (bench/run.ts, bench/backends.ts): knobs, process placement, server child
 * processes (started the same way, pinned to core 0), CPU accounting from /proc, and waiting for the
 * machine to go quiet.
 */
import { spawn, execFileSync, execSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
export { freePort } from '../../test/helpers/ports.js'
import { freePort } from '../../test/helpers/ports.js'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BENCH = join(ROOT, 'bench')

export const num = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`)
  return value
}

/** Where the servers' temporary data directories go (BENCH_DATA_ROOT; OS tmpdir by default). */
export const DATA_ROOT = process.env.BENCH_DATA_ROOT || tmpdir()
export const CPU_PROF = process.env.BENCH_CPU_PROF === '1'
export const QUIET_WAIT = num('BENCH_QUIET_WAIT', 120)

// ---------------------------------------------------------------- process placement

export function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
export const TASKSET = hasTaskset()
export const CORES = cpus().length

/**
 * Keeps the load generator (this process, all its threads) off core 0, where servers are pinned.
 * Returns a description of the placement for the report.
 */
export function pinLoadGenerator(): string {
  let placement = 'no taskset: servers and load generator share all cores'
  if (TASKSET) {
    placement = 'server pinned with `taskset -c 0`'
    if (CORES >= 2) {
      execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
      placement += '; autocannon (this process) pinned to core 1'
    }
  }
  return placement
}

// ---------------------------------------------------------------- servers

export interface Server {
  name: string
  child: ChildProcess
  port: number
  dataDir: string
  stderr: () => string
}

/** `pin: false` runs the server on every core (as `npm start` does) instead of core 0 alone. */
export async function startServer(name: string, script: string[], env: Record<string, string>, options: { pin?: boolean } = {}): Promise<Server> {
  const port = await freePort()
  const dataDir = mkdtempSync(join(DATA_ROOT, `parley-bench-${name.replace(/\W+/g, '-')}-`))
  const nodeArgs = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', join(BENCH, 'profiles')] : []
  const argv = [process.execPath, ...nodeArgs, ...script]
  const [cmd, ...args] = TASKSET && options.pin !== false ? ['taskset', '-c', '0', ...argv] : argv
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

export async function stopServer(server: Server): Promise<void> {
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()
/** CPU seconds consumed so far by a process (user, and user + system), from /proc; undefined off Linux. */
export function processCpu(pid: number | undefined): { user: number; total: number } | undefined {
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
export function machineUserSeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!
    const [user, nice] = line.trim().split(/\s+/).slice(1).map(Number)
    return (user! + nice!) / CLK_TCK
  } catch {
    return undefined
  }
}

/** User-mode CPU seconds used by this process (autocannon) so far. */
export const ownUserSeconds = () => process.cpuUsage().user / 1e6

/**
 * Other sessions' builds and test runs share this VM. Before each server's round, wait (up to
 * BENCH_QUIET_WAIT seconds) until other processes use less than a quarter of a core (user time).
 */
export async function waitForQuiet(): Promise<{ quiet: boolean; waited: number; other: number }> {
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

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await res.text()
  if (res.status !== 201 && res.status !== 200) throw new Error(`POST ${url} → ${res.status}: ${text}`)
  return JSON.parse(text)
}

/**
 * `npm run build` (unless BENCH_SKIP_BUILD=1), then what `npm start` runs: `node dist/cli.js serve`.
 * tsc still emits JavaScript on type errors: that build is benchmarked, and the note says so.
 */
export function buildParley(): { script: string[]; command: string; note: string } {
  let note = 'npm run build succeeded'
  if (process.env.BENCH_SKIP_BUILD === '1') {
    note = 'BENCH_SKIP_BUILD=1: benchmarked the existing dist/ without rebuilding'
  } else {
    process.stdout.write('Building Parley (npm run build)…\n')
    try {
      execSync('npm run build', { cwd: ROOT, stdio: 'inherit' })
    } catch {
      note = '**npm run build reported type errors**; tsc emitted dist/ anyway and that build was benchmarked'
    }
  }
  const cli = join(ROOT, 'dist', 'cli.js')
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing; run npm run build')
  return { script: [cli, 'serve'], command: 'node dist/cli.js serve', note }
}

/**
 * An @botpress/sdk program (a bot or an integration) as a child process on a free port, with the Runtime API's
 * address and key in its environment as the SDK reads them; resolves once its /health answers.
 */
export async function startSdkProgram(what: string, script: string, env: { BP_API_URL: string; BP_TOKEN: string; BP_BOT_ID: string }): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort()
  const child = spawn(process.execPath, [script], { env: { ...process.env, PORT: String(port), ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-5000)))
  const url = `http://127.0.0.1:${port}/`
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited: ${stderr}`)
    try {
      if ((await fetch(`${url}health`)).ok) return { child, url }
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not start: ${stderr}`)
    await sleep(100)
  }
}
