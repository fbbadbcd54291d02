import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The CLI tests run the real binary, `node dist/cli.js`, as a user would after `npm run build`. The build runs once
 * per test run, and only when dist/ is older than the sources (a stamp file records the last build); parallel test
 * files wait for each other through a lock directory.
 */
export const ROOT = join(import.meta.dirname, '..', '..')
export const CLI = join(ROOT, 'dist', 'cli.js')
const STAMP = join(ROOT, 'dist', '.cli-test-build-stamp')
const LOCK = join(ROOT, 'node_modules', '.cache', 'parley-cli-build.lock')

function newestSource(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path))
    else newest = Math.max(newest, statSync(path).mtimeMs)
  }
  return newest
}

const fresh = () =>
  existsSync(CLI) && existsSync(STAMP) &&
  statSync(STAMP).mtimeMs >= Math.max(newestSource(join(ROOT, 'src')), ...['scripts/build-webchat.mjs', 'scripts/bundle-vendor.mjs', 'tsconfig.build.json', 'package.json'].map((f) => statSync(join(ROOT, f)).mtimeMs))

export async function ensureBuilt(): Promise<void> {
  for (;;) {
    if (fresh()) return
    mkdirSync(join(LOCK, '..'), { recursive: true })
    try {
      mkdirSync(LOCK)
    } catch {
      // Another test file is building; a lock older than 3 minutes is left over from a killed run.
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs > 180_000) rmSync(LOCK, { recursive: true, force: true })
      await new Promise((r) => setTimeout(r, 500))
      continue
    }
    try {
      if (fresh()) return
      const started = Date.now()
      const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' })
      if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`)
      writeFileSync(STAMP, new Date(started).toISOString())
      return
    } finally {
      rmSync(LOCK, { recursive: true, force: true })
    }
  }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** The environment of a CLI run: none of the caller's PARLEY_* settings, no colors. */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PARLEY_') && !k.startsWith('BP_')) env[k] = v
  return { ...env, NO_COLOR: '1', ...extra }
}

/** Runs `node dist/cli.js ...args` to completion. */
export function runCli(args: string[], options: { env?: Record<string, string | undefined>; input?: string; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, env: cliEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`parley ${args.join(' ')} did not finish within ${options.timeoutMs ?? 15_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 15_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    // A command that exits without reading its input (`--help`) closes the pipe first: that EPIPE is not a failure.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err)
    })
    child.stdin.end(options.input ?? '')
  })
}

/** Starts a long-running command (serve, logs --follow); resolves once `ready` matches its output. */
export function startCli(args: string[], ready: RegExp, options: { env?: Record<string, string | undefined>; timeoutMs?: number } = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: cliEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] })
  const output = { stdout: '', stderr: '' }
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`parley ${args.join(' ')} printed nothing matching ${ready} within ${options.timeoutMs ?? 20_000} ms\nstdout: ${output.stdout}\nstderr: ${output.stderr}`)), options.timeoutMs ?? 20_000)
    const check = () => {
      if (ready.test(output.stdout) || ready.test(output.stderr)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout.on('data', (d: Buffer) => {
      output.stdout += d.toString()
      check()
    })
    child.stderr.on('data', (d: Buffer) => {
      output.stderr += d.toString()
      check()
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`parley ${args.join(' ')} exited with ${code} before it was ready\nstdout: ${output.stdout}\nstderr: ${output.stderr}`))
    })
  })
  return { child, output, started, exited }
}

export const FIXTURES = join(import.meta.dirname, 'fixtures')
