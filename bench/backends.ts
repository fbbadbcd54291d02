/**
 * `npm run bench -- backends`: createMessage throughput and latency of Parley on its three deployments,
 * in the same run with the same load, plus cross-instance delivery latency. Writes the `backends`
 * section of bench/RESULTS.md.
 *
 * - sqlite:  one instance, embedded SQLite (the default);
 * - sqlite-full: the same with PARLEY_SQLITE_SYNCHRONOUS=FULL (each commit synced, as PostgreSQL does);
 * - pg-1:    one instance on PostgreSQL, PostgreSQL on the servers' core;
 * - pg-1-own-core: the same with PostgreSQL on core 1 (a database server of its own, as when scaling out);
 * - pg-2:    two instances on the same PostgreSQL database, the connections split half and half.
 * Each round starts every variant afresh (new processes, new database), in that order; medians over
 * rounds; ratios are against the SQLite figure of the same round.
 * Then, on two fresh instances A and B: a listener on each, messages posted one at a time on A, and
 * the time from sending the POST to the SSE frame arriving on B (cross-instance: LISTEN/NOTIFY) and
 * on A (same instance, for reference).
 *
 * PostgreSQL is a throwaway cluster (test/helpers/pg-cluster.ts: Debian's postgresql package, fsync
 * and synchronous_commit on). Parley instances are pinned to core 0, the load generator to core 1, and
 * PostgreSQL to core 0 too (Parley and its database on one core), except in pg-1-own-core (core 1).
 *
 * Knobs (env): BENCH_DURATION (10), BENCH_WARMUP (2), BENCH_CONNECTIONS (50), BENCH_ROUNDS (5),
 * BENCH_XI_MESSAGES (200: messages of the cross-instance latency test), BENCH_QUIET_WAIT (120),
 * BENCH_SKIP_BUILD=1, BENCH_DATA_ROOT.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { SseStream } from '../test/e2e/sse-reader.js'
import { createDatabase, startPgCluster, type PgCluster } from '../test/helpers/pg-cluster.js'
import { fmt, gitRevision, load, median, setupParley, summarize, type Measure, type Target, AUTOCANNON_VERSION } from './lib/load.js'
import { writeResultsSection } from './lib/results.js'
import {
  buildParley, CORES, machineUserSeconds, num, ownUserSeconds, pinLoadGenerator, processCpu, QUIET_WAIT, sleep, startServer,
  stopServer, TASKSET, waitForQuiet, type Server,
} from './lib/servers.js'

const DURATION = num('BENCH_DURATION', 10)
const WARMUP = num('BENCH_WARMUP', 2)
const CONNECTIONS = Math.max(2, Math.floor(num('BENCH_CONNECTIONS', 50) / 2) * 2)
const ROUNDS = Math.max(1, Math.floor(num('BENCH_ROUNDS', 5)))
const XI_MESSAGES = Math.max(10, Math.floor(num('BENCH_XI_MESSAGES', 200)))
/** Issue #5: createMessage on PostgreSQL at least 0.7× the SQLite figure. */
const TARGET_RATIO = 0.7

const placement = pinLoadGenerator()

// ---------------------------------------------------------------- PostgreSQL processes

/** The postmaster's pid (first line of postmaster.pid). */
function postmasterPid(cluster: PgCluster): number {
  return Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n', 1)[0])
}

/** The postmaster and its children (backends, checkpointer, WAL writer, …). */
function postgresPids(cluster: PgCluster): number[] {
  const root = postmasterPid(cluster)
  const pids = [root]
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === root) pids.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

/** CPU seconds (user + system) per pid, for pids still alive. */
function cpuOf(pids: number[]): Map<number, number> {
  const out = new Map<number, number>()
  for (const pid of pids) {
    const c = processCpu(pid)
    if (c) out.set(pid, c.total)
  }
  return out
}

/** CPU used between two snapshots (a process born in between counts from zero; one that exited is lost). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, t] of after) total += t - (before.get(pid) ?? 0)
  return total
}

// ---------------------------------------------------------------- variants

interface Variant {
  key: 'sqlite' | 'sqlite-full' | 'pg-1' | 'pg-1-own-core' | 'pg-2'
  name: string
  /** The core PostgreSQL runs on: the servers' core 0, or core 1 (the load generator's), as a database server of its own. */
  postgresCore?: 0 | 1
}
/** In the order each round runs them: the PostgreSQL figure of the target right after the SQLite one it is compared with. */
const VARIANTS: Variant[] = [
  { key: 'sqlite', name: 'SQLite, 1 instance' },
  // As deployed when scaling out: the database on a machine of its own, Parley on the same one core as SQLite's row.
  ...(CORES >= 2 ? [{ key: 'pg-1-own-core', name: 'PostgreSQL on its own core, 1 instance', postgresCore: 1 } as const] : []),
  { key: 'pg-1', name: 'PostgreSQL, 1 instance', postgresCore: 0 },
  { key: 'pg-2', name: 'PostgreSQL, 2 instances', postgresCore: 0 },
  // Durability as PostgreSQL's (synchronous_commit=on: a commit survives power loss), for a like-for-like figure.
  { key: 'sqlite-full', name: 'SQLite FULL, 1 instance' },
]

/** Moves PostgreSQL (postmaster, and every process it started) to `core`; backends forked later inherit it. */
function pinPostgres(cluster: PgCluster, core: 0 | 1): void {
  if (!TASKSET) return
  for (const pid of postgresPids(cluster)) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' })
    } catch {
      // exited meanwhile
    }
  }
}

interface RoundResult {
  create: Measure
  /** CPU of the Parley processes and of PostgreSQL during the measurement, in cores. */
  parleyCpu: number
  postgresCpu: number
  /** User CPU of the load generator (this process: autocannon), in cores. */
  loadCpu: number
  otherCpu: number | undefined
  acknowledged: number
  rows: number
}

/** Half of the conversations (and their user keys) on instance B's URL. */
function split(target: Target, a: Server, b: Server): [Target, Target] {
  const half = target.perConnection.length / 2
  const onB = target.url.replace(`:${a.port}/`, `:${b.port}/`)
  return [
    { url: target.url, perConnection: target.perConnection.slice(0, half) },
    { url: onB, perConnection: target.perConnection.slice(half) },
  ]
}

/** Two autocannon runs at once, one per instance, combined: requests add up, latency is the worse instance's. */
function combine(parts: Measure[]): Measure {
  return {
    reqPerSec: parts.reduce((s, m) => s + m.reqPerSec, 0),
    p50: Math.max(...parts.map((m) => m.p50)),
    p99: Math.max(...parts.map((m) => m.p99)),
    avg: parts.reduce((s, m) => s + m.avg * m.total2xx, 0) / Math.max(1, parts.reduce((s, m) => s + m.total2xx, 0)),
    total2xx: parts.reduce((s, m) => s + m.total2xx, 0),
    non2xx: parts.reduce((s, m) => s + m.non2xx, 0),
    errors: parts.reduce((s, m) => s + m.errors, 0),
    timeouts: parts.reduce((s, m) => s + m.timeouts, 0),
  }
}

async function countRows(servers: Server[], databaseUrl: string | undefined): Promise<number> {
  if (!databaseUrl) {
    const db = new Database(join(servers[0]!.dataDir, 'data', 'parley.db'), { readonly: true, fileMustExist: true })
    try {
      return (db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM messages')).rows[0]!.n)
  } finally {
    await client.end()
  }
}

async function benchRound(variant: Variant, cluster: PgCluster, parley: string[]): Promise<RoundResult> {
  if (QUIET_WAIT > 0) {
    const q = await waitForQuiet()
    if (q.waited > 1.5) process.stdout.write(q.quiet ? `  (waited ${q.waited.toFixed(0)} s for quiet)\n` : `  (still busy after ${q.waited.toFixed(0)} s: others use ${q.other.toFixed(2)} cores; measuring anyway)\n`)
  }
  const onSqlite = variant.postgresCore === undefined
  if (!onSqlite) pinPostgres(cluster, variant.postgresCore!)
  const databaseUrl = onSqlite ? undefined : await createDatabase(cluster.url, 'bench')
  const env = {
    PARLEY_DATA_DIR: 'data',
    ...(databaseUrl && { PARLEY_DATABASE_URL: databaseUrl }),
    ...(variant.key === 'sqlite-full' && { PARLEY_SQLITE_SYNCHRONOUS: 'FULL' }),
  }
  const servers: Server[] = []
  try {
    // B starts once A has migrated and bootstrapped the database.
    servers.push(await startServer(`${variant.key}-a`, parley, env))
    if (variant.key === 'pg-2') servers.push(await startServer(`${variant.key}-b`, parley, env))
    const target = await setupParley(false, CONNECTIONS)(servers[0]!)
    const targets = servers.length === 2 ? split(target, servers[0]!, servers[1]!) : [target]
    const run = (seconds: number) =>
      Promise.all(targets.map((t, i) => load(servers[i]!, t, seconds, t.perConnection.length)))
    const warm = WARMUP > 0 ? await run(WARMUP) : []

    const pgPids = postgresPids(cluster)
    const parleyBefore = cpuOf(servers.map((s) => s.child.pid!))
    const pgBefore = cpuOf(pgPids)
    const machineBefore = machineUserSeconds()
    const ownBefore = ownUserSeconds()
    const t0 = performance.now()
    const results = await run(DURATION)
    const wall = (performance.now() - t0) / 1000
    const parleyCpu = cpuBetween(parleyBefore, cpuOf(servers.map((s) => s.child.pid!))) / wall
    const pgAfter = cpuOf(postgresPids(cluster))
    const postgresCpu = onSqlite ? 0 : cpuBetween(pgBefore, pgAfter) / wall
    const machineAfter = machineUserSeconds()
    const loadCpu = (ownUserSeconds() - ownBefore) / wall
    // Other processes' user time: everything but the servers, PostgreSQL and this process (system time is not counted).
    const otherCpu = machineBefore !== undefined && machineAfter !== undefined
      ? Math.max(0, (machineAfter - machineBefore) / wall - parleyCpu - postgresCpu - loadCpu) : undefined

    const create = combine(results.map((r) => summarize(r)))
    for (const s of servers) await stopServer(s)
    const acknowledged = create.total2xx + warm.reduce((n, r) => n + r['2xx'], 0) + 1
    const rows = await countRows(servers, databaseUrl)
    process.stdout.write(`  ${variant.name.padEnd(24)} ${fmt(create.reqPerSec).padStart(6)} req/s, p50 ${create.p50} ms, p99 ${create.p99} ms, ` +
      `Parley CPU ${(parleyCpu * 100).toFixed(0)}%, PostgreSQL CPU ${(postgresCpu * 100).toFixed(0)}%` +
      `${otherCpu !== undefined ? `, other processes ~${otherCpu.toFixed(2)} cores` : ''}\n`)
    return { create, parleyCpu, postgresCpu, loadCpu, otherCpu, acknowledged, rows }
  } catch (err) {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL')
    throw err
  } finally {
    for (const s of servers) rmSync(s.dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------- cross-instance delivery latency

interface Latency {
  /** POST sent → SSE frame on the other instance (B), ms. */
  cross: number[]
  /** POST sent → SSE frame on the same instance (A), ms. */
  same: number[]
  /** POST sent → 201 received, ms. */
  post: number[]
  lost: number
}

async function waitFor(stream: SseStream, messageId: string, timeoutMs: number): Promise<number | undefined> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const left = deadline - performance.now()
    if (left <= 0) return undefined
    try {
      const signal = await stream.nextSignal(left)
      if (signal.type === 'message_created' && signal.data.id === messageId) return performance.now()
    } catch {
      return undefined
    }
  }
}

async function crossInstance(cluster: PgCluster, parley: string[]): Promise<Latency> {
  const databaseUrl = await createDatabase(cluster.url, 'bench')
  const env = { PARLEY_DATA_DIR: 'data', PARLEY_DATABASE_URL: databaseUrl }
  const servers: Server[] = []
  const streams: SseStream[] = []
  try {
    servers.push(await startServer('xi-a', parley, env))
    servers.push(await startServer('xi-b', parley, env))
    const [a, b] = servers as [Server, Server]
    const target = await setupParley(false, 1)(a)
    const { headers, body } = target.perConnection[0]!
    const conversationId = (JSON.parse(body) as { conversationId: string }).conversationId
    const listenPath = target.url.replace(`http://127.0.0.1:${a.port}`, '').replace(/\/messages$/, `/conversations/${conversationId}/listen`)
    const onA = await SseStream.open(`http://127.0.0.1:${a.port}${listenPath}`, { headers: { 'x-user-key': headers['x-user-key']! }, timeoutMs: 10_000 })
    const onB = await SseStream.open(`http://127.0.0.1:${b.port}${listenPath}`, { headers: { 'x-user-key': headers['x-user-key']! }, timeoutMs: 10_000 })
    streams.push(onA, onB)
    if (onA.status !== 200 || onB.status !== 200) throw new Error(`listen answered ${onA.status} / ${onB.status}`)
    await sleep(500) // both listeners subscribed
    const result: Latency = { cross: [], same: [], post: [], lost: 0 }
    for (let i = 0; i < XI_MESSAGES; i++) {
      const t0 = performance.now()
      const res = await fetch(target.url, { method: 'POST', headers, body })
      const text = await res.text()
      const tPost = performance.now()
      if (res.status !== 201) throw new Error(`createMessage answered ${res.status}: ${text}`)
      const id = (JSON.parse(text) as { message: { id: string } }).message.id
      const [tA, tB] = await Promise.all([waitFor(onA, id, 10_000), waitFor(onB, id, 10_000)])
      result.post.push(tPost - t0)
      if (tA === undefined || tB === undefined) result.lost++
      if (tA !== undefined) result.same.push(tA - t0)
      if (tB !== undefined) result.cross.push(tB - t0)
      await sleep(20) // one message at a time: latency of an idle path, not of a queue
    }
    return result
  } finally {
    for (const s of streams) await s.close().catch(() => {})
    for (const s of servers) {
      if (s.child.exitCode === null) await stopServer(s).catch(() => s.child.kill('SIGKILL'))
      rmSync(s.dataDir, { recursive: true, force: true })
    }
  }
}

/** Nearest-rank percentile. */
function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((x, y) => x - y)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

// ---------------------------------------------------------------- report

function report(
  rounds: Map<Variant, RoundResult[]>, latency: Latency, meta: { startedAt: Date; loadBefore: number[]; buildNote: string; command: string; pgVersion: number },
): string {
  const sqlite = rounds.get(VARIANTS[0]!)!
  const med = (rs: RoundResult[], f: (r: RoundResult) => number) => median(rs.map(f))
  const ratios = (rs: RoundResult[]) => rs.map((r, i) => r.create.reqPerSec / sqlite[i]!.create.reqPerSec)
  const sqliteReq = med(sqlite, (r) => r.create.reqPerSec)
  const rows = VARIANTS.map((v) => {
    const rs = rounds.get(v)!
    const req = med(rs, (r) => r.create.reqPerSec)
    const xs = rs.map((r) => r.create.reqPerSec)
    const others = rs.map((r) => r.otherCpu).filter((x): x is number => x !== undefined)
    const perMessage = (cpu: (r: RoundResult) => number) => `${med(rs, (r) => (cpu(r) / r.create.reqPerSec) * 1e6).toFixed(0)} µs`
    return `| ${v.name} | **${fmt(req)}** | ${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))} | ${med(rs, (r) => r.create.p50)} ms | ${med(rs, (r) => r.create.p99)} ms | ` +
      `${(med(rs, (r) => r.parleyCpu) * 100).toFixed(0)}% | ${v.postgresCore === undefined ? '—' : `${(med(rs, (r) => r.postgresCpu) * 100).toFixed(0)}%`} | ` +
      `${perMessage((r) => r.parleyCpu)} | ${v.postgresCore === undefined ? '—' : perMessage((r) => r.postgresCpu)} | ${(med(rs, (r) => r.loadCpu) * 100).toFixed(0)}% | ` +
      `${others.length ? median(others).toFixed(2) : 'n/a'} | ${v.key === 'sqlite' ? '1.00' : (req / sqliteReq).toFixed(2)} | ${v.key === 'sqlite' ? '—' : ratios(rs).map((x) => x.toFixed(2)).join(', ')} |`
  })
  const byKey = (key: Variant['key']) => rounds.get(VARIANTS.find((v) => v.key === key)!)!
  const pg1 = byKey('pg-1')
  const pg2 = byKey('pg-2')
  const full = byKey('sqlite-full')
  const pg2Ratio = med(pg2, (r) => r.create.reqPerSec) / sqliteReq
  const fullRatio = med(full, (r) => r.create.reqPerSec) / sqliteReq
  const pg1VsFull = median(pg1.map((r, i) => r.create.reqPerSec / full[i]!.create.reqPerSec))
  const ownCore = VARIANTS.some((v) => v.key === 'pg-1-own-core') ? byKey('pg-1-own-core') : undefined
  const problems: string[] = []
  for (const v of VARIANTS) {
    rounds.get(v)!.forEach((r, i) => {
      const m = r.create
      if (m.non2xx || m.errors || m.timeouts) problems.push(`${v.name}, round ${i + 1}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts`)
      if (r.rows < r.acknowledged) problems.push(`${v.name}, round ${i + 1}: ${r.rows} rows stored, ${r.acknowledged} acknowledged`)
    })
  }
  if (latency.lost) problems.push(`cross-instance latency: ${latency.lost} of ${XI_MESSAGES} messages not delivered within 10 s`)
  const lat = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} ms | ${percentile(xs, 99).toFixed(1)} ms | ${Math.max(...xs).toFixed(1)} ms`
  /** The target's verdict on a deployment: both the ratio of the medians and the median of per-round ratios must reach it. */
  const verdict = (rs: RoundResult[]) => {
    const ofMedians = med(rs, (r) => r.create.reqPerSec) / sqliteReq
    const paired = median(ratios(rs))
    return ofMedians >= TARGET_RATIO && paired >= TARGET_RATIO ? '**met**' : ofMedians < TARGET_RATIO && paired < TARGET_RATIO ? '**NOT met**'
      : '**inconclusive** (the ratio of the medians and the median of per-round ratios fall on either side of it)'
  }
  /** Parley's CPU per message on a deployment over its CPU per message on SQLite (medians). */
  const perMessageRatio = (rs: RoundResult[]) =>
    med(rs, (r) => r.parleyCpu / r.create.reqPerSec) / med(sqlite, (r) => r.parleyCpu / r.create.reqPerSec)
  const ratioLine = (rs: RoundResult[]) =>
    `${(med(rs, (r) => r.create.reqPerSec) / sqliteReq).toFixed(2)}×** createMessage throughput (ratio of the medians; per round ${ratios(rs).map((x) => x.toFixed(2)).join(', ')}, median ${median(ratios(rs)).toFixed(2)}). Target ≥ ${TARGET_RATIO}×: ${verdict(rs)}.`

  return `## Backends: SQLite vs PostgreSQL vs two instances on PostgreSQL

_Written by \`bench/backends.ts\`; reproduce with \`npm run bench -- backends\` (or \`npx tsx bench/backends.ts\`)._

${ownCore ? `- **PostgreSQL on its own core, 1 instance / SQLite: ${ratioLine(ownCore)} Parley has one core in both rows, as
  SQLite's Parley does; PostgreSQL runs on the other core (with the load generator), standing in for the database server of
  its own that a scaled-out deployment has. This is the figure for issue #5's target: what moving an instance from SQLite to
  PostgreSQL costs that instance. Parley was ${(med(ownCore, (r) => r.parleyCpu) * 100).toFixed(0)}% busy; core 1 held PostgreSQL
  (${(med(ownCore, (r) => r.postgresCpu) * 100).toFixed(0)}%) and the load generator (${(med(ownCore, (r) => r.loadCpu) * 100).toFixed(0)}% user time, its kernel time not counted).
  In CPU per message, Parley on PostgreSQL needs ${perMessageRatio(ownCore).toFixed(2)}× what it needs on SQLite: the
  throughput one Parley core can give when the database is not the limit would be ${(1 / perMessageRatio(ownCore)).toFixed(2)}× SQLite's
  (derived from CPU time, not measured as throughput).
` : ''}- **PostgreSQL sharing Parley's core, 1 instance / SQLite: ${ratioLine(pg1)} Parley and PostgreSQL on one core: PostgreSQL's
  own CPU per message (column "PostgreSQL CPU / message") is taken from Parley's budget, the cost of running both on one small machine.
- Durability is not equal in that ratio: SQLite's default (WAL, synchronous=NORMAL) does not sync each commit, PostgreSQL
  (synchronous_commit=on) does. SQLite with synchronous=FULL, which does, ran at ${fullRatio.toFixed(2)}× the default here; PostgreSQL, 1 instance
  reached **${pg1VsFull.toFixed(2)}× SQLite FULL** (median of per-round ratios).
- **PostgreSQL, 2 instances / SQLite: ${pg2Ratio.toFixed(2)}×**. Both instances and PostgreSQL share the one server core, so this
  measures the cost of running two instances (two pools, LISTEN/NOTIFY to the other instance), not scale-out capacity.
- **Cross-instance delivery** (message posted on A → SSE frame on B, ${latency.cross.length} messages one at a time):
  **p50 ${percentile(latency.cross, 50).toFixed(1)} ms, p99 ${percentile(latency.cross, 99).toFixed(1)} ms**.
${problems.length ? `- **Run problems (figures not trustworthy):** ${problems.join('; ')}\n` : '- Run clean: no failed requests; every acknowledged message was found in the database afterwards; every message reached both listeners.\n'}
### createMessage, ${CONNECTIONS} connections, pipelining 1

| deployment | req/s (median) | req/s range | p50 | p99 | Parley CPU | PostgreSQL CPU | Parley CPU / message | PostgreSQL CPU / message | load generator user CPU | other procs | vs SQLite | per-round ratio |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
${rows.join('\n')}

Medians over ${ROUNDS} round${ROUNDS > 1 ? 's' : ''}; each round starts every deployment afresh (new processes, new database) in the
order of the table, and "per-round ratio" pairs each figure with the SQLite (default, synchronous=NORMAL) figure of the same round. With two
instances the ${CONNECTIONS} connections are split ${CONNECTIONS / 2}/${CONNECTIONS / 2}, one autocannon per instance running at once:
req/s is their sum, p50/p99 the worse instance's. CPU columns are in cores (100% = one core) over the measured window, and per
message (CPU time over messages created);
"other procs" is the user CPU other sessions' processes used meanwhile (above ~0.2 the round was disturbed).

### Delivery latency across instances (${XI_MESSAGES} messages, one at a time, 20 ms apart)

| from POST sent to … | p50 | p99 | max |
|---|---:|---:|---:|
| SSE frame on instance B (other instance: NOTIFY carries the id, B reads the message) | ${lat(latency.cross)} |
| SSE frame on instance A (the instance that took the POST) | ${lat(latency.same)} |
| 201 response on A | ${lat(latency.post)} |

### Setup

- **Command:** \`npm run bench -- backends\`; Parley is the compiled build as \`npm start\` runs it (\`${meta.command}\`). Build: ${meta.buildNote}.
- **Date:** ${meta.startedAt.toISOString()}; **revision** ${gitRevision()}
- **Machine:** ${CORES} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${osType()} ${release()}; load average before the run
  ${meta.loadBefore.map((x) => x.toFixed(2)).join(' / ')} (1/5/15 min). **This VM is shared with other engineers' builds and test runs**: absolute
  figures move by tens of percent between runs; compare the ratios within this run.
- **Placement:** ${placement}${TASKSET ? '; PostgreSQL (postmaster and every backend) pinned to core 0 with the Parley instances, except in the "own core" row, where it is pinned to core 1' : ''}.
- **Node** ${process.version}, autocannon ${AUTOCANNON_VERSION}; **PostgreSQL ${meta.pgVersion}** (Debian package, throwaway cluster from
  test/helpers/pg-cluster.ts on 127.0.0.1: fsync on, synchronous_commit on, shared_buffers 128MB); Parley defaults (pool of 10
  connections per instance, LOG_LEVEL=info). SQLite: WAL, synchronous=NORMAL (FULL in its own row).
- **Load:** ${WARMUP} s warm-up then ${DURATION} s measured per deployment and round; one user and conversation per connection, a bot
  without code (no bot turn follows a message); ${QUIET_WAIT > 0 ? `before each deployment the bench waits up to ${QUIET_WAIT} s for other processes to go quiet` : 'no wait for a quiet machine (BENCH_QUIET_WAIT=0)'}.
`
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const startedAt = new Date()
  const loadBefore = loadavg()
  const build = buildParley()
  process.stdout.write(`${CORES} cores, node ${process.version}, load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')}; ${placement}\n`)
  process.stdout.write('Starting a throwaway PostgreSQL cluster…\n')
  const cluster = await startPgCluster({ log: (line) => process.stdout.write(`  ${line}\n`) })
  const stopCluster = () => cluster.stopSync()
  process.once('exit', stopCluster)
  try {
    const rounds = new Map<Variant, RoundResult[]>(VARIANTS.map((v) => [v, []]))
    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`\nRound ${round}/${ROUNDS}, ${CONNECTIONS} connections\n`)
      for (const v of VARIANTS) rounds.get(v)!.push(await benchRound(v, cluster, build.script))
    }
    process.stdout.write(`\nCross-instance delivery latency, ${XI_MESSAGES} messages…\n`)
    const latency = await crossInstance(cluster, build.script)
    process.stdout.write(`  A → B p50 ${percentile(latency.cross, 50).toFixed(1)} ms, p99 ${percentile(latency.cross, 99).toFixed(1)} ms; same instance p50 ${percentile(latency.same, 50).toFixed(1)} ms\n`)
    const markdown = report(rounds, latency, { startedAt, loadBefore, buildNote: build.note, command: build.command, pgVersion: cluster.version })
    writeResultsSection('backends', markdown)
    process.stdout.write(`\n${markdown}\nWrote the backends section of bench/RESULTS.md\n`)
    if (/Run problems/.test(markdown)) process.exitCode = 1
  } finally {
    process.off('exit', stopCluster)
    await cluster.stop()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
