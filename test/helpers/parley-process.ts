/**
 * Parley as a process of its own (`tsx src/main.ts`, as `npm run dev` runs it) on a harness's data — its data
 * directory, database and port — for what only a process can show: a crash (`kill('SIGKILL')`) that leaves
 * whatever the instance held (leases) as it was. Stop the harness first (Harness.stop); start it again after with
 * restartParley.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Harness } from './harness.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface ParleyProcess {
  /** The server's process id (its memory can be read from /proc). */
  pid: number
  output(): string
  /** SIGKILL, at once: nothing is released, nothing is flushed. */
  kill(): Promise<void>
}

export async function startParleyProcess(h: Harness, env: Record<string, string> = {}): Promise<ParleyProcess> {
  const port = new URL(h.baseUrl).port
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PARLEY_'))),
      PARLEY_DATA_DIR: h.dataDir, PORT: port, HOST: '127.0.0.1', PARLEY_PUBLIC_URL: h.baseUrl, LOG_LEVEL: 'warn',
      PARLEY_BLOB_STORE: 'local',
      ...(h.databaseUrl && { PARLEY_DATABASE_URL: h.databaseUrl }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  child.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)))
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`parley (src/main.ts) exited during start-up: ${log}`)
    try {
      if ((await fetch(`${h.baseUrl}/healthz`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`parley (src/main.ts) did not answer /healthz within 60 s: ${log}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    pid: child.pid!,
    output: () => log,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}
