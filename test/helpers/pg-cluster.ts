/**
 * A throwaway PostgreSQL cluster for the test run, built from Debian's `postgresql` package
 * (`/usr/lib/postgresql/<version>/bin/{initdb,pg_ctl}`): initdb in a temporary directory (as the
 * `postgres` OS user when running as root, because initdb refuses root), trust authentication,
 * listening on 127.0.0.1 on a free port with its unix socket in the same temporary directory,
 * fsync on. `stop()` shuts it down and removes every file.
 *
 * Runs in the vitest main process (global setup) and in plain scripts; it never imports vitest.
 */
import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { freePort } from './ports.js'

const run = promisify(execFile)

export interface PgBinaries {
  version: number
  bin: string
}

/** Debian's server binaries, newest major first; undefined when the package is not installed. */
export function findPostgresBinaries(root = '/usr/lib/postgresql'): PgBinaries | undefined {
  let versions: number[]
  try {
    versions = readdirSync(root).map(Number).filter((v) => Number.isInteger(v) && v > 0).sort((a, b) => b - a)
  } catch {
    return undefined
  }
  for (const version of versions) {
    const bin = join(root, String(version), 'bin')
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')) && existsSync(join(bin, 'postgres'))) return { version, bin }
  }
  return undefined
}

export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the maintenance database of the cluster. */
  url: string
  port: number
  dir: string
  version: number
  stop(): Promise<void>
  /** Last-resort synchronous stop (process exit handlers). */
  stopSync(): void
}

/** The OS user the server runs as: `postgres` when we are root (initdb and postgres refuse root). */
function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('running as root, but there is no `postgres` OS user to run PostgreSQL as')
  const [, , uid, gid] = line.split(':')
  return { name: 'postgres', uid: Number(uid), gid: Number(gid) }
}

async function runAs(user: { name: string } | undefined, file: string, args: string[], timeoutMs: number) {
  const [cmd, argv] = user ? ['runuser', ['-u', user.name, '--', file, ...args]] : [file, args]
  try {
    return await run(cmd, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C', LANG: 'C' } })
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string }
    throw new Error(`${[cmd, ...argv].join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`)
  }
}

export async function startPgCluster(options: { binaries?: PgBinaries; log?: (line: string) => void } = {}): Promise<PgCluster> {
  const binaries = options.binaries ?? findPostgresBinaries()
  if (!binaries) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (Debian package `postgresql`)')
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'parley-pg-'))
  const data = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  if (user) chownSync(dir, user.uid, user.gid)
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  try {
    // initdb's own final sync is skipped (a crash of the test machine loses a throwaway cluster
    // anyway); the server itself runs with fsync on, as in production.
    await runAs(user, join(binaries.bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'], 120_000)
    let lastError: unknown
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort()
      writeFileSync(join(data, 'postgresql.auto.conf'), [
        `listen_addresses = '127.0.0.1'`,
        `port = ${port}`,
        `unix_socket_directories = '${dir}'`,
        `fsync = on`,
        `synchronous_commit = on`,
        `full_page_writes = on`,
        // Every test file opens pools; API suites start several Parley instances.
        `max_connections = 400`,
        `shared_buffers = '128MB'`,
        `log_min_messages = warning`,
        `log_min_error_statement = panic`,
        '',
      ].join('\n'))
      if (user) chownSync(join(data, 'postgresql.auto.conf'), user.uid, user.gid)
      try {
        await runAs(user, join(binaries.bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-w', '-t', '60', 'start'], 90_000)
        const url = `postgres://postgres@127.0.0.1:${port}/postgres`
        await waitReady(url)
        const stop = async () => {
          try {
            await runAs(user, join(binaries.bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop'], 90_000)
          } finally {
            cleanup()
          }
        }
        const stopSync = () => {
          const args = [join(binaries.bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']
          try {
            if (user) execFileSync('runuser', ['-u', user.name, '--', ...args], { stdio: 'ignore', timeout: 30_000 })
            else execFileSync(args[0]!, args.slice(1), { stdio: 'ignore', timeout: 30_000 })
          } catch {
            // already stopped
          }
          cleanup()
        }
        return { url, port, dir, version: binaries.version, stop, stopSync }
      } catch (err) {
        lastError = err
        appendFileSync(logFile, `\n-- start attempt ${attempt + 1} failed --\n`)
        options.log?.(`postgres did not start on port ${port}, retrying: ${String(err)}`)
      }
    }
    throw lastError
  } catch (err) {
    let log = ''
    try {
      log = readFileSync(logFile, 'utf8').slice(-4000)
    } catch {}
    cleanup()
    throw new Error(`${err instanceof Error ? err.message : String(err)}${log ? `\nserver log:\n${log}` : ''}`)
  }
}

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const client = new pg.Client({ connectionString: url })
    try {
      await client.connect()
      await client.query('select 1')
      return
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 100))
    } finally {
      await client.end().catch(() => {})
    }
  }
}

/** Replaces the database name of a connection URL. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** Creates an empty database `parley_<random>` on the cluster and returns its URL. */
export async function createDatabase(baseUrl: string, prefix = 'parley'): Promise<string> {
  const name = `${prefix}_${randomBytes(8).toString('hex')}`
  const client = new pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE "${name}"`)
  } finally {
    await client.end()
  }
  return withDatabase(baseUrl, name)
}

/** Drops a database made by createDatabase, disconnecting whoever is still on it. */
export async function dropDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1))
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`refusing to drop database ${JSON.stringify(name)}`)
  const client = new pg.Client({ connectionString: withDatabase(url, 'postgres') })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  } finally {
    await client.end()
  }
}
