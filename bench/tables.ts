import { sql } from 'kysely'
/**
 * Tables API: bulk insert throughput and findTableRows latency over a large table (1,000,000 rows by
 * default; BENCH_TABLE_ROWS to change), per backend, measured at the TablesService (what the routes and
 * the sandboxed client call: row checks, filter parsing, SQL; no HTTP). Queries: a key-column lookup, an
 * indexed-column range (string and number columns are indexed), an unindexed filter (a path into an
 * object column: a scan of the table's rows) and a grouping (sum per category over all rows).
 * PostgreSQL runs on a throwaway cluster when its binaries are installed. Run: `npx tsx bench/tables.ts`.
 */
import { TablesService } from '../src/domain/tables-service.js'
import type { KyselyStore } from '../src/store/kysely/kysely-store.js'
import { writeResultsSection } from './lib/results.js'
import { onEachBackend, type BackendExtras } from './lib/backends.js'

const ROWS = Number(process.env.BENCH_TABLE_ROWS ?? 1_000_000)
const BATCH = 1000

interface Report { backend: string; insertRate: number; queries: { name: string; runs: number; p50: number; p99: number; rows: number }[]; socket?: Report }

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!
}

async function measure(backend: string, store: KyselyStore, extras: BackendExtras): Promise<Report> {
  const now = Date.now()
  const wsId = `ws_bench_${now}`
  await store.createWorkspace({ id: wsId, name: 'bench', createdAt: now, updatedAt: now })
  const botId = `bot_bench_${now}`
  await store.createBot({ id: botId, workspaceId: wsId, name: 'bench', description: null, tags: {}, dev: false, signingSecret: 's', code: null, maxExecutionTime: null, deployedAt: null, url: null, webchat: null, actions: null, createdAt: now, updatedAt: now }, [])
  const tables = new TablesService(store)
  const table = await tables.createTable(botId, {
    name: 'BenchTable', keyColumn: 'k',
    schema: { k: { type: 'string' }, cat: { type: 'string' }, n: { type: 'number' }, flag: { type: 'boolean' }, meta: { type: 'object' } },
  })
  const started = performance.now()
  for (let i = 0; i < ROWS; i += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, ROWS - i) }, (_, j) => {
      const x = i + j
      return { k: `key${x}`, cat: `c${x % 100}`, n: x, flag: x % 2 === 0, meta: { v: x % 10_000 } }
    })
    const r = await tables.createRows(botId, table.id, rows)
    if (r.errors.length > 0) throw new Error(r.errors[0])
    if (i % 100_000 === 0) process.stdout.write(`  ${backend}: ${i} rows\n`)
  }
  const insertRate = ROWS / ((performance.now() - started) / 1000)
  // Settle after the bulk load, as one would: PostgreSQL's autovacuum would otherwise vacuum and analyse the new
  // rows during the queries; SQLite's WAL is checkpointed into the database file.
  if (store.dialect === 'postgres') await sql`VACUUM ANALYZE bot_table_rows`.execute(store.db)
  else await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(store.db)
  const queries = await measureQueries(backend, store, botId, table.id)
  // The same queries on the same database over the server's Unix socket (a PostgreSQL on the same host)
  const socket = extras.overUnixSocket ? { backend: `${backend} over its Unix socket`, insertRate: NaN, queries: await measureQueries(`${backend} (socket)`, await extras.overUnixSocket(), botId, table.id) } : undefined
  return { backend, insertRate, queries, ...(socket && { socket }) }
}

async function measureQueries(backend: string, store: KyselyStore, botId: string, tableId: string): Promise<Report['queries']> {
  const tables = new TablesService(store)
  const queries: Report['queries'] = []
  const run = async (name: string, runs: number, input: (i: number) => Parameters<TablesService['findRows']>[2]) => {
    const times: number[] = []
    let rows = 0
    for (let i = 0; i < runs + 3; i++) {
      const t0 = performance.now()
      const r = await tables.findRows(botId, tableId, input(i))
      if (i >= 3) times.push(performance.now() - t0) // 3 warm-up runs
      rows = r.rows.length
    }
    queries.push({ name, runs, p50: pct(times, 50), p99: pct(times, 99), rows })
    process.stdout.write(`  ${backend} ${name}: p50 ${pct(times, 50).toFixed(2)} ms, p99 ${pct(times, 99).toFixed(2)} ms (${rows} rows)\n`)
  }
  // The floor under any query: one trivial statement through the same Kysely instance (for PostgreSQL, a round
  // trip to the server; for SQLite, an in-process call).
  const floor: number[] = []
  for (let i = 0; i < 2003; i++) {
    const t0 = performance.now()
    await sql`select 1`.execute(store.db)
    if (i >= 3) floor.push(performance.now() - t0)
  }
  queries.push({ name: 'floor: `select 1` through the store\'s connection', runs: 2000, p50: pct(floor, 50), p99: pct(floor, 99), rows: 1 })
  const rnd = (i: number) => (i * 7919) % ROWS
  await run('key lookup `{ k: "key…" }`', 2000, (i) => ({ filter: { k: `key${rnd(i)}` } }))
  await run('indexed range `{ n: { $gte, $lt } }` (100 rows)', 2000, (i) => ({ filter: { n: { $gte: rnd(i) % (ROWS - 100), $lt: (rnd(i) % (ROWS - 100)) + 100 } } }))
  await run('unindexed `{ "meta.v": … }` (first 100 matches)', 10, (i) => ({ filter: { 'meta.v': rnd(i) % 10_000 } }))
  await run('group `{ cat: "key", n: "sum" }` over all rows', 5, () => ({ group: { cat: 'key', n: 'sum' } }))
  return queries
}

const reports: Report[] = await onEachBackend('tables', measure)

/** PostgreSQL against SQLite, operation by operation, with the floor each backend cannot go under. */
function verdict(): string {
  const [lite, pg] = reports
  if (!lite || !pg) return 'PostgreSQL was not measured (no server binaries).'
  const ratiosOf = (against: Report) => lite.queries.map((q) => {
    const other = against.queries.find((x) => x.name === q.name)!
    return `${q.name.replace(/`.*/, '').replace(/:\s*$/, '').trim() || q.name}: p50 ${(other.p50 / q.p50).toFixed(1)}×, p99 ${(other.p99 / q.p99).toFixed(1)}×`
  })
  const ratios = ratiosOf(pg)
  const key = lite.queries.find((q) => q.name.startsWith('key'))!
  const ranged = lite.queries.find((q) => q.name.startsWith('indexed'))!
  const met = (b: boolean) => (b ? 'met' : '**NOT met**')
  return [
    `SQLite: ${Math.round(lite.insertRate).toLocaleString('en-US')} rows/s (≥ 20,000: ${met(lite.insertRate >= 20_000)}), key lookup p99 ${key.p99.toFixed(2)} ms (≤ 10: ${met(key.p99 <= 10)}), indexed range p99 ${ranged.p99.toFixed(2)} ms (≤ 20: ${met(ranged.p99 <= 20)}).`,
    `PostgreSQL / SQLite: bulk insert ${(lite.insertRate / pg.insertRate).toFixed(1)}× slower; ${ratios.join('; ')}.`,
    ...(pg.socket ? [`PostgreSQL over its Unix socket / SQLite (same database, same queries): ${ratiosOf(pg.socket).join('; ')}.`] : []),
    'The floor row is what one statement costs before any work: for PostgreSQL a round trip to the server, for SQLite',
    'an in-process call. Where a query on SQLite costs less than twice PostgreSQL\'s floor, "within 2×" cannot be met.',
  ].join('\n')
}

const lines = reports.flatMap((r) => [
  `| ${r.backend} | bulk insert (createRows, ${BATCH} rows per call) | ${Math.round(r.insertRate).toLocaleString('en-US')} rows/s | | |`,
  ...r.queries.map((q) => `| ${r.backend} | ${q.name} | ${q.runs} runs | ${q.p50.toFixed(2)} ms | ${q.p99.toFixed(2)} ms |`),
  ...(r.socket?.queries ?? []).map((q) => `| ${r.socket!.backend} | ${q.name} | ${q.runs} runs | ${q.p50.toFixed(2)} ms | ${q.p99.toFixed(2)} ms |`),
])
writeResultsSection('tables', `## Tables API (\`npx tsx bench/tables.ts\`, \`npm run bench -- tables\`)

${ROWS.toLocaleString('en-US')} rows in one table (columns: key \`k\`, \`cat\` with 100 values, \`n\`, \`flag\`, object \`meta\`),
measured at the TablesService (row checks, filter parsing and the SQL; no HTTP), on a shared 2-core machine.
Targets: ≥ 20,000 inserted rows/s, key lookup p99 ≤ 10 ms, indexed filter p99 ≤ 20 ms on SQLite; PostgreSQL
within 2× of SQLite. Measured ${new Date().toISOString().slice(0, 10)}.

| Backend | Operation | | p50 | p99 |
|---|---|---|---|---|
${lines.join('\n')}

${verdict()}
`)
