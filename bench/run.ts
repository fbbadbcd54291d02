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
import { execSync } from 'node:child_process'
import { writeResultsSection } from './lib/results.js'
import {
  BENCH, CORES, CPU_PROF, DATA_ROOT, QUIET_WAIT, ROOT, TASKSET, num, pinLoadGenerator, startServer, stopServer, waitForQuiet, postJson, type Server,
} from './lib/servers.js'
import {
  AUTOCANNON_VERSION, fmt, gitRevision, ms, load, measured, medianMeasure, messageBody, setupParley, type Measure, type Target,
} from './lib/load.js'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { cpus, loadavg, release, tmpdir, totalmem, type as osType } from 'node:os'
import { join, relative } from 'node:path'
import autocannon from 'autocannon'
import Database from 'better-sqlite3'

const DURATION = num('BENCH_DURATION', 10)
const WARMUP = num('BENCH_WARMUP', 2)
const CONNECTIONS = num('BENCH_CONNECTIONS', 50)
const ROUNDS = Math.max(1, Math.floor(num('BENCH_ROUNDS', 3)))
const HEALTHZ = process.env.BENCH_HEALTHZ !== '0'
const HEALTHZ_CONNECTIONS = 100 // as in engineering-notes §3.2
const HEALTHZ_DURATION = 5
const SERVERS = new Set((process.env.BENCH_SERVERS || 'baseline,parley,parley-demo').split(',').map((s) => s.trim()))
const TARGET_RATIO = 0.6
const TARGET_P99_MS = 25
const placement = pinLoadGenerator()



// ---------------------------------------------------------------- load


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


interface VariantResult {
  variant: Variant
  rounds: RoundResult[]
  /** Medians over the rounds, metric by metric. */
  create: Measure
  healthz?: Measure
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

- **parley**: the compiled build exactly as \`npm start\` runs it (\`${PARLEY_COMMAND}\`, default config: LOG_LEVEL=info, so the
  request log writes one line per request), posting to the chat webhook of a bot created without code
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
