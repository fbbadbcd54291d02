/**
 * PostgreSQL CPU per appended row for variants of the group append.
 *   npx tsx bench/tools/pg-append/bench.ts [variant ...]      (default: all)
 * Env: SECS (measured seconds, default 4), WARM (warm-up seconds, 1), BATCH (25), CONVS (50), WORKERS (2),
 *      PGURL (reuse a running cluster instead of starting one), EXPLAIN=1 (print EXPLAIN ANALYZE of each variant).
 * Each variant gets a fresh database (real migrations + seed), then WORKERS connections each loop:
 * append a batch of BATCH rows (each a different conversation, CONVS in rotation) and, for
 * notify='separate', a pg_notify batch on its own publishing connection (as PostgresPubSub does).
 * One LISTEN connection hears every channel. CPU = utime+stime from /proc of the backends (ticks).
 */
import { readFileSync, readdirSync } from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'
import { spawn, execFileSync } from 'node:child_process'
import { createDatabase, startPgCluster, dropDatabase } from '../../../test/helpers/pg-cluster.js'
import { VARIANTS, type Variant } from './variants.js'
import { columns, type Row } from './common.js'

const SECS = Number(process.env.SECS ?? 4)
const WARM = Number(process.env.WARM ?? 1)
const BATCH = Number(process.env.BATCH ?? 25)
const CONVS = Number(process.env.CONVS ?? 50)
const WORKERS = Number(process.env.WORKERS ?? 2)
const TICK_US = 1e6 / 100

const channelOf = (integrationId: string, conversationId: string) =>
  `parley_${createHash('sha256').update(`conversation:${integrationId}:${conversationId}`, 'utf8').digest('hex').slice(0, 40)}`

let idCounter = 0
function uuidv7ish(): string {
  const t = Date.now().toString(16).padStart(12, '0')
  const c = (idCounter++ & 0xfff).toString(16).padStart(3, '0')
  const r = randomBytes(8).toString('hex')
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${c}-${(8 | (parseInt(r[0]!, 16) & 3)).toString(16)}${r.slice(1, 4)}-${r.slice(4, 16)}`
}

function cpuTicks(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
    return Number(f[11]) + Number(f[12]) // utime, stime (fields 14, 15)
  } catch {
    return 0
  }
}

/** Every process of the cluster: the postmaster and its children. */
function clusterPids(postmaster: number): number[] {
  const pids = [postmaster]
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8')
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === postmaster) pids.push(Number(d))
    } catch {}
  }
  return pids
}

async function migrate(client: pg.Client) {
  const dir = new URL('../../../migrations/postgres/', import.meta.url).pathname
  for (const file of readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort()) {
    const text = readFileSync(dir + file, 'utf8')
    for (const s of text.split(/;\s*$/m).map((s) => s.replace(/^\s*--.*$/gm, '').trim()).filter(Boolean)) await client.query(s)
  }
}

interface Conv { integrationId: string; id: string; userId: string; channel: string }

async function seed(client: pg.Client): Promise<Conv[]> {
  const now = Date.now()
  await client.query(`INSERT INTO workspaces VALUES ('ws1', 'ws', $1, $1)`, [now])
  await client.query(`INSERT INTO bots (id, workspace_id, name, tags, dev, signing_secret, created_at, updated_at) VALUES ('bot1', 'ws1', 'b', '{}', 0, 's', $1, $1)`, [now])
  const integrationId = uuidv7ish()
  await client.query(`INSERT INTO integrations VALUES ($1, 'bot1', 'chat', 'wh1', 'k', 1, '{}', $2, $2)`, [integrationId, now])
  const convs: Conv[] = []
  for (let i = 0; i < CONVS; i++) {
    const userId = uuidv7ish(); const id = uuidv7ish()
    await client.query(`INSERT INTO users VALUES ($1, $2, 'u', NULL, NULL, 0, $3, $3)`, [integrationId, userId, now])
    await client.query(`INSERT INTO conversations (integration_id, id, owner_id, last_seq, last_at, created_at, updated_at) VALUES ($1, $2, $3, 0, $4, $4, $4)`, [integrationId, id, userId, now])
    await client.query(`INSERT INTO participants VALUES ($1, $2, $3, $4)`, [integrationId, id, userId, now])
    convs.push({ integrationId, id, userId, channel: channelOf(integrationId, id) })
  }
  return convs
}

async function runVariant(baseUrl: string, v: Variant) {
  const url = await createDatabase(baseUrl, 'bench')
  const admin = new pg.Client({ connectionString: url }); await admin.connect()
  await migrate(admin)
  for (const s of v.setup ?? []) await admin.query(s)
  const convs = await seed(admin)
  for (const s of v.afterSeed ?? []) await admin.query(s)
  await admin.query('VACUUM ANALYZE')

  const listener = new pg.Client({ connectionString: url }); await listener.connect()
  let heard = 0
  listener.on('notification', () => { heard++ })
  for (const c of convs) await listener.query(`LISTEN ${c.channel}`)
  if (v.notify === 'batch') await listener.query('LISTEN parley_appends')

  const workers: { append: pg.Client; notify: pg.Client }[] = []
  for (let i = 0; i < WORKERS; i++) {
    const append = new pg.Client({ connectionString: url }); await append.connect()
    const notify = new pg.Client({ connectionString: url }); await notify.connect()
    workers.push({ append, notify })
  }
  const pidOf = async (c: pg.Client) => Number((await c.query('SELECT pg_backend_pid() AS p')).rows[0].p)
  const backendPids = [await pidOf(listener)]
  for (const w of workers) backendPids.push(await pidOf(w.append), await pidOf(w.notify))
  const postmaster = Number((await admin.query(`SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'`)).rows[0].pid)
  const pmPid = Number(readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])

  let rotation = 0
  let appended = 0
  let failed = 0
  let batches = 0
  const payload = (id: string) => JSON.stringify({ type: 'text', text: `Hello! I would like to know the status of my order #4521, please. ${id.slice(-6)}` })
  const nextBatch = (): Row[] => {
    const rows: Row[] = []
    const now = Date.now()
    for (let k = 0; k < BATCH; k++) {
      const c = convs[(rotation + k) % convs.length]!
      const id = uuidv7ish()
      rows.push({ kind: 'message', id, integration_id: c.integrationId, conversation_id: c.id, user_id: c.userId, is_bot: 0, payload: payload(id), metadata: null, bot_skip: 0, now, require_participant: true, channel: c.channel })
    }
    rotation = (rotation + BATCH) % convs.length
    return rows
  }
  let stop = false
  const loop = async (w: { append: pg.Client; notify: pg.Client }) => {
    while (!stop) {
      const rows = nextBatch()
      const params = v.params(rows)
      const r = await w.append.query({ name: 'append', text: v.sql, values: params })
      const n = v.count ? v.count(r) : r.rowCount ?? 0
      appended += n
      failed += rows.length - n
      batches++
      if (v.notify === 'separate') {
        await w.notify.query({ name: 'notify', text: 'SELECT pg_notify(c, m) FROM unnest($1::text[], $2::text[]) AS t(c, m)', values: [rows.map((r) => r.channel), rows.map(() => 'changed')] })
      }
    }
  }
  const stat = async () => {
    const r = (await admin.query(`SELECT pg_current_wal_lsn() AS lsn, xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0]
    return { lsn: r.lsn as string, commits: Number(r.xact_commit), backend: backendPids.reduce((s, p) => s + cpuTicks(p), 0), cluster: clusterPids(pmPid).reduce((s, p) => s + cpuTicks(p), 0) }
  }
  // warm-up (prepared statements settle on their plan, FPIs after the checkpoint)
  await admin.query('CHECKPOINT')
  stop = false
  let running = workers.map(loop)
  await new Promise((r) => setTimeout(r, WARM * 1000))
  const heard0 = heard
  let perf: import('node:child_process').ChildProcess | undefined
  if (process.env.PERF) perf = spawn('perf', ['record', '-g', '-o', `/tmp/perf-${v.name}.data`, '-p', String(backendPids[1]), '--', 'sleep', String(SECS)], { stdio: 'ignore' })
  const a0 = appended; const b0 = batches; const s0 = await stat(); const t0 = performance.now()
  await new Promise((r) => setTimeout(r, SECS * 1000))
  const s1 = await stat(); const t1 = performance.now(); const a1 = appended; const b1 = batches
  stop = true
  await Promise.all(running)
  await new Promise((r) => setTimeout(r, 100))
  const rows = a1 - a0
  const wal = Number((await admin.query(`SELECT pg_wal_lsn_diff($1, $2) AS d`, [s1.lsn, s0.lsn])).rows[0].d)
  if (process.env.WALDUMP) {
    const dd = (await admin.query('SHOW data_directory')).rows[0].data_directory
    await admin.query('SELECT pg_switch_wal()')
    try {
      const out = execFileSync('/usr/lib/postgresql/15/bin/pg_waldump', ['-p', `${dd}/pg_wal`, '-s', s0.lsn, '-e', s1.lsn, '--stats=record'], { encoding: 'utf8' })
      console.log(`---- WAL ${v.name} (${rows} rows)\n${out}`)
    } catch (e) { console.log(String(e)) }
  }
  const hot = (await admin.query(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'conversations'`)).rows[0]
  // correctness: seq per conversation is 1..n without gaps
  const check = (await admin.query(`SELECT count(*) AS bad FROM (SELECT conversation_id, count(*) AS n, max(seq) AS mx, count(DISTINCT seq) AS d FROM messages GROUP BY 1) x WHERE n <> mx OR d <> n`)).rows[0].bad
  const result = {
    variant: v.name,
    rowsPerSec: Math.round(rows / ((t1 - t0) / 1000)),
    backendUsPerRow: +(((s1.backend - s0.backend) * TICK_US) / rows).toFixed(1),
    clusterUsPerRow: +(((s1.cluster - s0.cluster) * TICK_US) / rows).toFixed(1),
    walBytesPerRow: Math.round(wal / rows),

    pgCpuPct: Math.round(((s1.cluster - s0.cluster) * TICK_US) / ((t1 - t0) * 1000) * 100),
    failed,
    hotPct: Math.round((Number(hot.n_tup_hot_upd) / Math.max(1, Number(hot.n_tup_upd))) * 100),
    notified: heard - heard0,
    badConversations: Number(check),
  }
  const ps = (await workers[0]!.append.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'append'`)).rows[0]
  ;(result as any).plans = `${ps.generic_plans}g/${ps.custom_plans}c`
  if (process.env.EXPLAIN) {
    const rows = nextBatch()
    const c = workers[0]!.append
    await c.query('BEGIN')
    await c.query(`SET plan_cache_mode = force_generic_plan`)
    await c.query(`PREPARE px AS ${v.sql}`)
    const args = v.params(rows).map((a) => c.escapeLiteral(String((pg as any).utils.prepareValue(a)))).join(', ')
    const e = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE px(${args})`)
    await c.query('ROLLBACK')
    console.log(`---- ${v.name}\n${e.rows.map((r) => r['QUERY PLAN']).join('\n')}`)
  }
  for (const w of workers) { await w.append.end(); await w.notify.end() }
  await listener.end(); await admin.end()
  await dropDatabase(url)
  return result
}

const wanted = process.argv.slice(2)
const chosen = wanted.length ? VARIANTS.filter((v) => wanted.includes(v.name)) : VARIANTS
const cluster = process.env.PGURL ? undefined : await startPgCluster()
const baseUrl = process.env.PGURL ?? cluster!.url
if (cluster) console.error(`cluster ${cluster.url} in ${cluster.dir}`)
try {
  const results = []
  for (let rep = 0; rep < Number(process.env.REPEAT ?? 1); rep++) for (const v of chosen) {
    const r = await runVariant(baseUrl, v)
    console.error(JSON.stringify(r))
    results.push(r)
  }
  console.table(results)
} finally {
  await cluster?.stop()
}
