/**
 * getBotAnalytics over a bot with 1,000,000 messages (BENCH_ANALYTICS_MESSAGES to change) spread over 30 days,
 * 10,000 users and 20,000 conversations, per backend: the time of the whole call at the AnalyticsService (the
 * seven counting statements; no HTTP), for the 30 days and for one day. Then the dashboard's other series
 * (getBotQualityAnalytics: handoffs and waits, failed turns, knowledge searches, feedback tags; their rows scaled to
 * the messages) alone, and the dashboard's whole load (both calls, as the console makes them). The rows are written straight into
 * the tables (what the Chat API would have stored), so the figure is the query, not the load.
 * PostgreSQL runs on a throwaway cluster when its binaries are installed. Run: `npm run bench -- analytics`.
 */
import { sql } from 'kysely'
import { AnalyticsService } from '../src/domain/analytics-service.js'
import { BotService } from '../src/domain/bot-service.js'
import type { KyselyStore } from '../src/store/kysely/kysely-store.js'
import { gitRevision } from './lib/load.js'
import { writeResultsSection } from './lib/results.js'
import { onEachBackend } from './lib/backends.js'

const MESSAGES = Number(process.env.BENCH_ANALYTICS_MESSAGES ?? 1_000_000)
const USERS = 10_000
const CONVERSATIONS = 20_000
const DAYS = 30
const DAY = 86_400_000
const START = Date.UTC(2026, 9, 1)

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!
}

interface Report { backend: string; loadSeconds: number; ranges: { name: string; runs: number; p50: number; max: number }[]; check: number }

/** The quality series' rows, scaled to the messages (at 1,000,000: 2,000 handoffs, 1,000 failed turns, 50,000 searches, 20,000 feedback tags). */
const HANDOFFS = Math.max(10, Math.round(MESSAGES / 500))
const FAILURES = Math.max(10, Math.round(MESSAGES / 1000))
const SEARCHES = Math.max(10, Math.round(MESSAGES / 20))
const FEEDBACK_EVERY = 50 // one bot message in 25 rated: messages m1, m51, m101… (odd = the bot's)

async function measure(backend: string, store: KyselyStore): Promise<Report> {
  const now = Date.now()
  const ws = `ws_an_${now}`
  await store.createWorkspace({ id: ws, name: 'bench', createdAt: now, updatedAt: now })
  const botId = `bot_an_${now}`
  const integrationId = `int_an_${now}`
  await store.createBot({ id: botId, workspaceId: ws, name: 'bench', description: null, tags: {}, dev: false, signingSecret: 's', code: null, maxExecutionTime: null, deployedAt: null, url: null, webchat: null, actions: null, createdAt: now, updatedAt: now },
    [{ id: integrationId, botId, name: 'chat', webhookId: `wh_an_${now}`, encryptionKey: 'k', enabled: true, configuration: {}, createdAt: now, updatedAt: now } as never])
  const db = store.db as never as import('kysely').Kysely<any>
  const t0 = performance.now()
  const batch = async (table: string, rows: Record<string, unknown>[]) => {
    for (let i = 0; i < rows.length; i += 1000) await db.insertInto(table).values(rows.slice(i, i + 1000)).execute()
  }
  // users appear over the first 20 days; conversations belong to a user
  await batch('users', Array.from({ length: USERS }, (_, i) => ({ integration_id: integrationId, id: `u${i}`, name: null, picture_url: null, profile: null, is_bot: 0, created_at: START + Math.floor((i / USERS) * 20 * DAY), updated_at: START })))
  const seqs = new Array<number>(CONVERSATIONS).fill(0)
  await batch('conversations', Array.from({ length: CONVERSATIONS }, (_, i) => ({ integration_id: integrationId, id: `c${i}`, owner_id: `u${i % USERS}`, last_seq: 0, last_at: START, bot_seq: 0, bot_lease_owner: null, bot_lease_until: 0, created_at: START, updated_at: START })))
  let x = 1
  const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  for (let i = 0; i < MESSAGES; i += 10_000) {
    const rows: Record<string, unknown>[] = []
    for (let j = i; j < Math.min(MESSAGES, i + 10_000); j++) {
      const c = Math.floor(rnd() * CONVERSATIONS)
      rows.push({ id: `m${j}`, integration_id: integrationId, conversation_id: `c${c}`, seq: ++seqs[c]!, user_id: j % 2 === 0 ? `u${c % USERS}` : botId, is_bot: j % 2, payload: '{"type":"text","text":"hello"}', metadata: null, bot_skip: 0, created_at: START + Math.floor((j / MESSAGES) * DAYS * DAY) })
    }
    await db.transaction().execute(async (trx) => { for (let k = 0; k < rows.length; k += 1000) await trx.insertInto('messages').values(rows.slice(k, k + 1000)).execute() })
    if (i % 200_000 === 0) process.stdout.write(`  ${backend}: ${i.toLocaleString('en-US')} messages\n`)
  }
  // The quality series' rows: handoffs (ended; 4 in 5 claimed after 10 s to 10 min), failed turns, knowledge searches, feedback tags.
  await batch('handoffs', Array.from({ length: HANDOFFS }, (_, i) => {
    const requested = START + Math.floor((i / HANDOFFS) * DAYS * DAY)
    const claimed = i % 5 === 4 ? null : requested + 10_000 + Math.floor(rnd() * 590_000)
    return { id: `h${i}`, bot_id: botId, integration_id: integrationId, conversation_id: `c${i % CONVERSATIONS}`, user_id: `u${i % USERS}`, status: 'ended', reason: null,
      requested_at: requested, claimed_by: claimed === null ? null : 'agent', claimed_name: claimed === null ? null : 'Agent', claimed_at: claimed, ended_at: (claimed ?? requested) + 60_000 }
  }))
  await batch('bot_turn_failures', Array.from({ length: FAILURES }, (_, i) => ({ bot_id: botId, source_id: `m${i * 2}`, conversation_id: `c${i % CONVERSATIONS}`, kind: 'message', reason: i % 3 === 0 ? 'timeout' : 'error', created_at: START + Math.floor((i / FAILURES) * DAYS * DAY) })))
  await batch('knowledge_searches', Array.from({ length: SEARCHES }, (_, i) => ({ bot_id: botId, id: `k${i}`, conversation_id: `c${i % CONVERSATIONS}`, query: 'when is the shop open', no_answer: i % 10 < 3 ? 1 : 0, best_relevance: 0.5, created_at: START + Math.floor((i / SEARCHES) * DAYS * DAY) })))
  const rated = Array.from({ length: Math.floor(MESSAGES / FEEDBACK_EVERY) }, (_, i) => i * FEEDBACK_EVERY + 1).filter((j) => j < MESSAGES)
  await batch('message_tags', rated.map((j, i) => ({ message_id: `m${j}`, integration_id: integrationId, key: 'feedback', value: i % 4 === 0 ? 'negative' : 'positive' })))
  if (store.dialect === 'postgres') await sql`ANALYZE`.execute(db)
  const loadSeconds = (performance.now() - t0) / 1000
  const service = new AnalyticsService(store, new BotService(store, {} as never))
  const ranges: Report['ranges'] = []
  let check = 0
  for (const [name, from, to, runs] of [['30 days', START, START + (DAYS - 1) * DAY, 5], ['one day', START + 10 * DAY, START + 10 * DAY, 10]] as const) {
    const times: number[] = []
    for (let r = 0; r < runs + 1; r++) {
      const t = performance.now()
      const records = await service.botAnalytics(ws, botId, new Date(from).toISOString(), new Date(to).toISOString())
      if (r > 0) times.push(performance.now() - t) // the first run warms the caches
      if (name === '30 days') check = records.reduce((s, rec) => s + rec.userMessages + rec.botMessages, 0)
    }
    ranges.push({ name, runs, p50: pct(times, 50), max: Math.max(...times) })
    process.stdout.write(`  ${backend} ${name}: p50 ${pct(times, 50).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms\n`)
  }
  if (check !== MESSAGES) throw new Error(`${backend}: the 30 days count ${check} messages, ${MESSAGES} were written`)
  // getBotQualityAnalytics alone, then the dashboard's load (both calls at once, as the console makes them).
  const quality = () => service.botQuality(ws, botId, new Date(START).toISOString(), new Date(START + (DAYS - 1) * DAY).toISOString())
  const dashboard = (from: number, to: number) => Promise.all([
    service.botAnalytics(ws, botId, new Date(from).toISOString(), new Date(to).toISOString()),
    service.botQuality(ws, botId, new Date(from).toISOString(), new Date(to).toISOString()),
  ])
  for (const [name, run, runs] of [
    ['quality series, 30 days', quality, 5],
    ['dashboard (both), 30 days', () => dashboard(START, START + (DAYS - 1) * DAY), 5],
    ['dashboard (both), one day', () => dashboard(START + 10 * DAY, START + 10 * DAY), 10],
  ] as const) {
    const times: number[] = []
    for (let r = 0; r < runs + 1; r++) {
      const t = performance.now()
      await run()
      if (r > 0) times.push(performance.now() - t)
    }
    ranges.push({ name, runs, p50: pct(times, 50), max: Math.max(...times) })
    process.stdout.write(`  ${backend} ${name}: p50 ${pct(times, 50).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms\n`)
  }
  const q = await quality()
  const total = (k: keyof (typeof q)[number]) => q.reduce((s, r) => s + Number(r[k]), 0)
  const wanted = { handoffsRequested: HANDOFFS, failed: FAILURES, knowledgeSearches: SEARCHES, feedback: rated.length }
  const got = { handoffsRequested: total('handoffsRequested'), failed: total('failedTurns') + total('timedOutTurns'), knowledgeSearches: total('knowledgeSearches'), feedback: total('positiveFeedback') + total('negativeFeedback') }
  if (JSON.stringify(got) !== JSON.stringify(wanted)) throw new Error(`${backend}: the quality series count ${JSON.stringify(got)}, ${JSON.stringify(wanted)} were written`)
  return { backend, loadSeconds, ranges, check }
}

const reports: Report[] = await onEachBackend('analytics', measure)

writeResultsSection('analytics', `## Analytics: getBotAnalytics over ${MESSAGES.toLocaleString('en-US')} messages

_Generated by \`bench/analytics.ts\` (\`npm run bench -- analytics\`) at ${gitRevision()}, ${new Date().toISOString()}; overwritten by every run._

One bot, ${MESSAGES.toLocaleString('en-US')} messages (half from users) over ${DAYS} days in ${CONVERSATIONS.toLocaleString('en-US')} conversations of ${USERS.toLocaleString('en-US')} users;
the whole call at the service (seven counting statements, sessions by a window function), the first run not counted.
Every run's 30-day total is checked against the messages written. The dashboard's other series (getBotQualityAnalytics:
four counting statements) over ${HANDOFFS.toLocaleString('en-US')} handoffs, ${FAILURES.toLocaleString('en-US')} failed turns, ${SEARCHES.toLocaleString('en-US')} knowledge searches and
${Math.floor(MESSAGES / FEEDBACK_EVERY).toLocaleString('en-US')} feedback tags, their totals checked too; "dashboard (both)" is the console's load: the two calls at once.

| backend | range | runs | p50 | max |
|---|---|---:|---:|---:|
${reports.flatMap((r) => r.ranges.map((q) => `| ${r.backend} | ${q.name} | ${q.runs} | ${q.p50.toFixed(0)} ms | ${q.max.toFixed(0)} ms |`)).join('\n')}
`)
