/**
 * Helpers of the cluster suites: real `parley serve` processes (the built binary, through
 * test/cli/helpers.ts) on one PostgreSQL database, Debian's nginx in front of them
 * (test/helpers/nginx.ts), and a tracker that kills every process a suite started in afterAll,
 * whatever happened.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import type { Credentials } from '../../src/domain/bootstrap.js'
import { startCli } from '../cli/helpers.js'
import { findNginx, freePort, startNginx, type Nginx } from '../helpers/nginx.js'
import { findPostgresBinaries, type PgCluster } from '../helpers/pg-cluster.js'

export { freePort }

/**
 * Without nginx the suites skip, with a message; when PostgreSQL is required (CI, which also
 * installs nginx) they fail instead, so a CI run never passes without having run them.
 */
export function nginxOrSkip(): string | undefined {
  const binary = findNginx()
  if (!binary && process.env.PARLEY_REQUIRE_POSTGRES === '1') {
    throw new Error('PARLEY_REQUIRE_POSTGRES=1 runs the cluster tests, but nginx is not installed (apt-get install nginx)')
  }
  if (!binary) process.stdout.write('[parley tests] nginx not found (/usr/sbin/nginx): cluster tests are SKIPPED (apt-get install nginx)\n')
  return binary
}

export interface Instance {
  name: string
  port: number
  /** This instance's own address (bypassing nginx). */
  url: string
  pid: number
  output: { stdout: string; stderr: string }
  exited: Promise<number | null>
  alive(): boolean
  kill(signal: NodeJS.Signals): void
}

/** Everything a suite started, stopped in afterAll (SIGKILL: the suites test crashes, not shutdowns). */
export class Processes {
  private readonly instances: Instance[] = []
  private readonly proxies: Nginx[] = []
  private readonly dirs: string[] = []
  // A test worker that dies (timeout, Ctrl-C) skips afterAll: never leave a server behind.
  private readonly onExit = () => {
    for (const instance of this.instances) if (instance.alive()) instance.kill('SIGKILL')
    for (const proxy of this.proxies) proxy.process.kill('SIGTERM') // the master stops its workers
  }

  constructor() {
    process.once('exit', this.onExit)
  }

  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix))
    this.dirs.push(dir)
    return dir
  }

  /**
   * `parley serve` on `port` with PARLEY_DATABASE_URL; resolves when it printed its banner. Bot
   * limits are short so that a dead instance's conversation lease (turn timeout + 10 s) expires
   * within the test's time; keep-alives every second keep the official listener up.
   */
  start(name: string, options: { port: number; databaseUrl: string; dataDir: string; publicUrl: string; env?: Record<string, string> }): { instance: Instance; started: Promise<Instance> } {
    const server = startCli(
      ['serve', '--port', String(options.port), '--host', '127.0.0.1', '--data-dir', options.dataDir, '--database-url', options.databaseUrl, '--public-url', options.publicUrl, '--log-level', 'warn'],
      /OpenAPI:/,
      { timeoutMs: 60_000, env: { PARLEY_BOT_TIMEOUT_MS: '6000', PARLEY_BOT_TURN_TIMEOUT_MS: '6000', PARLEY_SSE_KEEPALIVE_MS: '1000', PARLEY_DATABASE_POOL_SIZE: '4', ...options.env } },
    )
    const instance: Instance = {
      name,
      port: options.port,
      url: `http://127.0.0.1:${options.port}`,
      pid: server.child.pid!,
      output: server.output,
      exited: server.exited,
      alive: () => server.child.exitCode === null && server.child.signalCode === null,
      kill: (signal) => void server.child.kill(signal),
    }
    this.instances.push(instance)
    return { instance, started: server.started.then(() => instance) }
  }

  async nginx(upstreams: string[], port?: number): Promise<Nginx> {
    const proxy = await startNginx(upstreams, { ...(port !== undefined && { port }) })
    this.proxies.push(proxy)
    return proxy
  }

  async stopAll(): Promise<void> {
    process.off('exit', this.onExit)
    for (const instance of this.instances) {
      if (!instance.alive()) continue
      instance.kill('SIGKILL')
    }
    await Promise.all(this.instances.map((i) => i.exited))
    await Promise.all(this.proxies.map((p) => p.stop().catch(() => {})))
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true })
  }
}

export function readCredentials(dataDir: string): Credentials {
  return JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials
}

/** One query on the database, on its own short-lived connection (the test's view of what is stored). */
export async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(text, values)).rows
  } finally {
    await client.end().catch(() => {})
  }
}

export { sleep }

/** Polls `check` until it returns a value (not undefined); rejects after `timeoutMs` with `what`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (err) {
      lastError = err
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`)
    await sleep(everyMs)
  }
}

const run = promisify(execFile)

/**
 * Stops and starts the server of a cluster made by startPgCluster (same data directory, same
 * port), as the `postgres` OS user when we are root: PostgreSQL going away under running instances.
 */
export async function pgCtl(cluster: PgCluster, action: 'stop-immediate' | 'stop-fast' | 'start'): Promise<void> {
  const binaries = findPostgresBinaries()
  if (!binaries) throw new Error('PostgreSQL binaries not found')
  const data = join(cluster.dir, 'data')
  const args =
    action === 'start'
      ? ['-D', data, '-l', join(cluster.dir, 'server.log'), '-w', '-t', '60', 'start']
      : ['-D', data, '-m', action === 'stop-fast' ? 'fast' : 'immediate', '-w', '-t', '60', 'stop']
  const pgCtlPath = join(binaries.bin, 'pg_ctl')
  const [cmd, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', pgCtlPath, ...args]] : [pgCtlPath, args]
  await run(cmd, argv, { timeout: 90_000, env: { ...process.env, LC_ALL: 'C', LANG: 'C' } })
}
