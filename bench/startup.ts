/**
 * Start-up of `npm start` on a warm install (dist/ built and up to date, so its prestart only checks dates): the
 * time from running the command to the first 200 of /healthz, and the resident memory once idle, of the server
 * (`node dist/cli.js serve`) and of the npm wrapper around it. The first start on an empty data dir also
 * bootstraps (database, demo bot, credentials.json); the later ones reuse it. `node dist/cli.js serve` alone is
 * measured too, to tell the wrapper's cost from the server's. Reproduce: `npm run bench -- startup`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gitRevision } from './lib/load.js'
import { writeResultsSection } from './lib/results.js'
import { freePort, sleep } from './lib/servers.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5)
const IDLE_MS = 5_000
const TARGET_READY_MS = 2_000
const TARGET_RSS_MB = 110

/** Resident memory of a process, in MB (Linux /proc). */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb === undefined ? undefined : Number(kb) / 1024
  } catch {
    return undefined
  }
}

/** Every descendant of `pid` (from /proc/<pid>/stat's parent ids). */
function descendants(pid: number): { pid: number; cmd: string }[] {
  const parents = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)])
    } catch {
      // gone
    }
  }
  const out: { pid: number; cmd: string }[] = []
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      let cmd = ''
      try {
        cmd = readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').join(' ').trim()
      } catch {
        // gone
      }
      out.push({ pid: c, cmd })
      walk(c)
    }
  }
  walk(pid)
  return out
}

interface Run { readyMs: number; serverMb: number; wrapperMb: number | undefined }

async function once(command: string[], dataDir: string): Promise<Run> {
  const port = await freePort()
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PARLEY_|LOG_LEVEL$|PORT$|HOST$|npm_)/.test(k)))
  const started = performance.now()
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-10_000)))
  let readyMs = 0
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited (code ${child.exitCode}):\n${stderr}`)
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) {
        readyMs = performance.now() - started
        break
      }
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error(`${command.join(' ')} not ready in 60 s:\n${stderr}`)
    await sleep(20)
  }
  await sleep(IDLE_MS)
  // Under npm: the node process running the server (not the `sh -c` npm runs it through).
  const server = command[0] === 'npm'
    ? descendants(child.pid!).filter((p) => p.cmd.includes('dist/cli.js serve') && !/^(\/bin\/)?sh\b/.test(p.cmd)).sort((a, b) => (rssMb(b.pid) ?? 0) - (rssMb(a.pid) ?? 0))[0]
    : { pid: child.pid! }
  const serverMb = server ? rssMb(server.pid) ?? 0 : 0
  const wrapperMb = command[0] === 'npm' ? rssMb(child.pid!) : undefined
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  if (server && server.pid !== child.pid) process.kill(server.pid, 'SIGTERM')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(timer)
  return { readyMs, serverMb, wrapperMb }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ms = (x: number) => `${Math.round(x).toLocaleString('en-US')} ms`
const mb = (x: number | undefined) => (x === undefined ? '—' : `${x.toFixed(0)} MB`)

// A warm install: dist/ built and up to date (the prestart then only compares dates).
const warm = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.mjs')], { cwd: ROOT, stdio: 'inherit' })
if (warm.status !== 0) process.exit(1)

const rows: string[] = []
const summary: Record<string, { ready: number; server: number; wrapper?: number }> = {}
const COMMANDS = [
  ['npm start', ['npm', 'start']],
  ['node dist/cli.js serve', [process.execPath, 'dist/cli.js', 'serve']],
  // the young generation capped (README): what idle memory it saves; its cost under load is in the turns section
  ['node --max-semi-space-size=4 dist/cli.js serve', [process.execPath, '--max-semi-space-size=4', 'dist/cli.js', 'serve']],
] as const
for (const [label, command] of COMMANDS) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-startup-'))
  try {
    const first = await once([...command], dataDir)
    const again: Run[] = []
    for (let i = 0; i < ROUNDS; i++) again.push(await once([...command], dataDir))
    const ready = median(again.map((r) => r.readyMs))
    const server = median(again.map((r) => r.serverMb))
    const wrappers = again.map((r) => r.wrapperMb).filter((x): x is number => x !== undefined)
    const wrapper = wrappers.length ? median(wrappers) : undefined
    summary[label] = { ready, server, ...(wrapper !== undefined && { wrapper }) }
    rows.push(`| \`${label}\` | first start (empty data dir) | ${ms(first.readyMs)} | ${mb(first.serverMb)} | ${mb(first.wrapperMb)} |`)
    rows.push(`| \`${label}\` | restart (median of ${ROUNDS}; range ${ms(Math.min(...again.map((r) => r.readyMs)))}–${ms(Math.max(...again.map((r) => r.readyMs)))}) | **${ms(ready)}** | **${mb(server)}** | ${mb(wrapper)} |`)
    process.stdout.write(`${label}: first ${ms(first.readyMs)}, restart median ${ms(ready)}, idle RSS ${mb(server)} (npm wrapper ${mb(wrapper)})\n`)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const npm = summary['npm start']!
writeResultsSection('startup', `## Start-up: \`npm start\` on a warm install

_Generated by \`bench/startup.ts\` (\`npm run bench -- startup\`) at ${gitRevision()}, ${new Date().toISOString()}; overwritten by every run._

Ready = from running the command to the first 200 of \`/healthz\`; idle RSS read from /proc ${IDLE_MS / 1000} s after ready.
dist/ is built and up to date, so \`npm start\`'s prestart (\`scripts/build-if-stale.mjs\`) only compares dates.
Load average when the run ended (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(' / ')}: start-up time is CPU-bound, so other work on the machine shows.

- **Ready: ${ms(npm.ready)}** (target ≤ ${ms(TARGET_READY_MS)}: **${npm.ready <= TARGET_READY_MS ? 'met' : 'NOT met'}**).
- **Idle RSS of the server: ${mb(npm.server)}** (target ≤ ${TARGET_RSS_MB} MB: **${npm.server <= TARGET_RSS_MB ? 'met' : 'NOT met'}**), plus ${mb(npm.wrapper)} for the npm process around it.

| command | run | ready | idle RSS (server) | idle RSS (npm) |
|---|---|---:|---:|---:|
${rows.join('\n')}
`)
