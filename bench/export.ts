/**
 * The console's export (exportBotConversations, GET /v1/admin/bots/{id}/export) of a range of 100,000 messages
 * (BENCH_EXPORT_MESSAGES to change) in 1,000 conversations, as CSV and as JSON Lines, per backend: an in-process
 * Parley listening on 127.0.0.1, the export read over HTTP a chunk at a time (counted, not kept). Reports
 * messages/s and the process's peak RSS growth during the export (sampled every 5 ms, over the RSS after a full
 * GC before it), beside the size of the file: a streamed export's memory stays flat while the file grows. The
 * messages are written straight into the tables (what the Chat API would have stored), so the figure is the export,
 * not the load. Every export's lines are counted against the messages written. Run: `npm run bench -- export`.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { AddressInfo } from 'node:net'
import type { Kysely } from 'kysely'
import { withBenchApp } from './lib/bench-app.js'
import { gitRevision } from './lib/load.js'
import { writeResultsSection } from './lib/results.js'
import { findPostgresBinaries, startPgCluster } from '../test/helpers/pg-cluster.js'

const MESSAGES = Number(process.env.BENCH_EXPORT_MESSAGES ?? 100_000)
const CONVERSATIONS = 1_000
const START = Date.UTC(2026, 9, 1)
const DAY = 86_400_000

setFlagsFromString('--expose_gc')
const gc = runInNewContext('gc') as () => void

interface Run { format: string; seconds: number; perSecond: number; bytes: number; peakRssGrowthMb: number; baseRssMb: number }
interface Report { backend: string; runs: Run[] }

async function measure(backend: string, kind: 'sqlite' | 'postgres', pgUrl: string | undefined): Promise<Report> {
  return withBenchApp(kind, pgUrl, async (app, _botHeaders, botId, { store, token, workspaceId }) => {
    const db = store.db as unknown as Kysely<any>
    const integration = await db.selectFrom('integrations').select('id').where('bot_id', '=', botId).where('name', '=', 'chat').executeTakeFirstOrThrow()
    const integrationId = integration.id as string
    // Users, conversations, then the messages: a user's question and the bot's answer, ~80 characters each.
    const users = Array.from({ length: CONVERSATIONS }, (_, i) => ({ integration_id: integrationId, id: `eu${i}`, name: null, picture_url: null, profile: null, is_bot: 0, created_at: START, updated_at: START }))
    for (let i = 0; i < users.length; i += 500) await db.insertInto('users').values(users.slice(i, i + 500)).execute()
    const perConversation = Math.ceil(MESSAGES / CONVERSATIONS)
    const conversations = Array.from({ length: CONVERSATIONS }, (_, i) => ({
      integration_id: integrationId, id: `ec${i}`, owner_id: `eu${i}`, last_seq: perConversation, last_at: START + 29 * DAY, bot_seq: perConversation,
      bot_lease_owner: null, bot_lease_until: 0, created_at: START, updated_at: START,
    }))
    for (let i = 0; i < conversations.length; i += 500) await db.insertInto('conversations').values(conversations.slice(i, i + 500)).execute()
    let written = 0
    for (let c = 0; c < CONVERSATIONS && written < MESSAGES; c += 10) {
      const rows: Record<string, unknown>[] = []
      for (let k = c; k < Math.min(CONVERSATIONS, c + 10); k++) {
        for (let s = 1; s <= perConversation && written < MESSAGES; s++, written++) {
          const bot = s % 2 === 0
          const text = bot ? `Our shop is open from 8:00 to 18:00, Monday to Friday (answer ${s} of conversation ${k}).` : `When is the repair shop open? I need my bike back by Friday (message ${s}).`
          rows.push({
            id: `em${k}-${s}`, integration_id: integrationId, conversation_id: `ec${k}`, seq: s, user_id: bot ? botId : `eu${k}`, is_bot: bot ? 1 : 0,
            payload: JSON.stringify({ type: 'text', text }), metadata: null, bot_skip: 0, created_at: START + Math.floor((s / perConversation) * 29 * DAY),
          })
        }
      }
      await db.transaction().execute(async (trx) => { for (let i = 0; i < rows.length; i += 500) await trx.insertInto('messages').values(rows.slice(i, i + 500)).execute() })
    }
    process.stdout.write(`  ${backend}: ${written.toLocaleString('en-US')} messages written\n`)

    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const headers = { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId }
    const range = `from=${new Date(START).toISOString().slice(0, 10)}&to=${new Date(START + 30 * DAY).toISOString().slice(0, 10)}`

    const runs: Run[] = []
    for (const format of ['csv', 'json', 'csv', 'json']) {
      gc()
      const baseRss = process.memoryUsage().rss
      let peak = baseRss
      const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
      const t0 = performance.now()
      const res = await fetch(`${base}/v1/admin/bots/${botId}/export?format=${format}&${range}`, { headers })
      if (!res.ok || !res.body) throw new Error(`${backend} ${format}: ${res.status} ${await res.text()}`)
      let bytes = 0
      let lines = 0
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength
        for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++
      }
      const seconds = (performance.now() - t0) / 1000
      clearInterval(sampler)
      peak = Math.max(peak, process.memoryUsage().rss)
      const expected = format === 'csv' ? written + 1 : written // the CSV header line
      if (lines !== expected) throw new Error(`${backend} ${format}: ${lines} lines exported, ${expected} expected`)
      const run = { format, seconds, perSecond: written / seconds, bytes, peakRssGrowthMb: (peak - baseRss) / 2 ** 20, baseRssMb: baseRss / 2 ** 20 }
      process.stdout.write(`  ${backend} ${format}: ${run.perSecond.toFixed(0)} messages/s, ${(bytes / 2 ** 20).toFixed(1)} MB, peak RSS +${run.peakRssGrowthMb.toFixed(1)} MB (from ${run.baseRssMb.toFixed(0)} MB)\n`)
      runs.push(run)
    }
    // The first export of each format warms the caches: the second is reported.
    return { backend, runs: runs.slice(2) }
  })
}

const reports: Report[] = [await measure('SQLite', 'sqlite', undefined)]
if (findPostgresBinaries()) {
  const cluster = await startPgCluster()
  try { reports.push(await measure('PostgreSQL 15', 'postgres', cluster.url)) } finally { await cluster.stop() }
}

writeResultsSection('export', `## Export: the console's exportBotConversations over ${MESSAGES.toLocaleString('en-US')} messages

_Generated by \`bench/export.ts\` (\`npm run bench -- export\`) at ${gitRevision()}, ${new Date().toISOString()}; overwritten by every run._

One bot, ${MESSAGES.toLocaleString('en-US')} messages in ${CONVERSATIONS.toLocaleString('en-US')} conversations, exported as a date range over HTTP
(in-process Parley on 127.0.0.1; the client reads and counts the stream without keeping it); the second export of each
format is reported (the first warms the caches). Peak RSS growth: the process's highest RSS during the export (sampled
every 5 ms; server and client share the process) minus its RSS after a full GC just before. Every export's line count is
checked against the messages written.

| backend | format | messages/s | seconds | file | peak RSS growth |
|---|---|---:|---:|---:|---:|
${reports.flatMap((r) => r.runs.map((x) => `| ${r.backend} | ${x.format === 'json' ? 'JSON Lines' : 'CSV'} | ${x.perSecond.toFixed(0)} | ${x.seconds.toFixed(2)} | ${(x.bytes / 2 ** 20).toFixed(1)} MB | ${x.peakRssGrowthMb.toFixed(1)} MB |`)).join('\n')}
`)
