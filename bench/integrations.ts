/**
 * Integration benchmark (issue 19): an outside message → the bot's reply delivered to the outside service, through
 * an unchanged @botpress/sdk integration (test/fixtures/sdk-integrations/outside-chat.mjs, its own process).
 *
 * The path of one message: the outside service's webhook POST on the installation's webhookUrl → webhook_received
 * to the integration → its Runtime API calls (getOrCreateUser, getOrCreateConversation, getOrCreateMessage) → the
 * bot's turn (sandboxed code replying) → the reply sent from the conversation's log as message_created (lease,
 * cursor, status tag) → the integration POSTs it to the outside service → ack (updateMessage). Latency is measured
 * from the webhook POST to the reply's arrival at the outside service.
 *
 * On a fresh server (`node dist/main.js`, SQLite): closed loops of BENCH_INTEGRATIONS_CONVERSATIONS outside chats
 * (default 1, then 20) × 1 message in flight for BENCH_INTEGRATIONS_SECONDS (default 8) after a 2 s warm-up: p50/p99
 * and messages/s. Rewrites its section of bench/RESULTS.md.
 */
import type { ChildProcess } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@botpress/client'
import { runBenchScript } from './lib/results.js'
import { startSdkProgram } from './lib/servers.js'
import { definitionBody } from '../test/helpers/sdk-integration.js'
import definition from '../test/fixtures/sdk-integrations/outside-chat.definition.mjs'
import { defaults, startServer, stopServer, summarize, type LatencySummary, type Server } from './turns.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const num = (name: string, fallback: number) => {
  const raw = process.env[name]
  const v = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`)
  return v
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: 're: ' + event.payload.text } })
  },
}
`

/** The outside chat service: /send resolves the waiter of its text (the reply arrived). */
async function startOutside(): Promise<{ url: string; expect(text: string): Promise<number>; close(): Promise<void> }> {
  const waiting = new Map<string, (at: number) => void>()
  let nextId = 1
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      const at = performance.now()
      if (req.url === '/send') {
        const { text } = JSON.parse(raw) as { text: string }
        waiting.get(text)?.(at)
        waiting.delete(text)
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: nextId++ }))
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    expect: (text) => new Promise((resolve) => waiting.set(text, resolve)),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

async function startIntegration(apiUrl: string, token: string): Promise<{ child: ChildProcess; url: string }> {
  return startSdkProgram('the integration', join(ROOT, 'test', 'fixtures', 'sdk-integrations', 'outside-chat.mjs'), { BP_API_URL: apiUrl, BP_TOKEN: token, BP_BOT_ID: '' })
}

interface Setup { server: Server; integration: ChildProcess; outside: Awaited<ReturnType<typeof startOutside>>; webhookUrl: string }

async function setUp(): Promise<Setup> {
  const server = await startServer({ ...defaults(), logLevel: 'warn' })
  const c = JSON.parse(readFileSync(join(server.dataDir, 'credentials.json'), 'utf8')) as { token: string; workspaceId: string; botId: string }
  const admin = new Client({ apiUrl: server.base, token: c.token, workspaceId: c.workspaceId })
  const outside = await startOutside()
  const { integration } = await admin.createIntegration(definitionBody(definition) as never)
  const key = await admin.createIntegrationApiKey({ integrationId: integration.id, note: 'bench' })
  const program = await startIntegration(server.base, key.value)
  await admin.updateIntegration({ id: integration.id, url: program.url } as never)
  await admin.updateBot({ id: c.botId, code: CODE })
  await admin.updateBot({ id: c.botId, integrations: { outside: { integrationId: integration.id, enabled: true, configuration: { serviceUrl: outside.url, verifyToken: 'bench' } } } } as never)
  const webhookUrl = (await admin.getBot({ id: c.botId })).bot.integrations.outside!.webhookUrl
  return { server, integration: program.child, outside, webhookUrl }
}

async function tearDown(s: Setup): Promise<void> {
  s.integration.kill('SIGKILL')
  await s.outside.close()
  await stopServer(s.server)
}

const agent = new http.Agent({ keepAlive: true })
let counter = 0

/** One outside message in chat `chat`: resolves with the ms from the webhook POST to the reply at the outside service. */
async function roundTrip(s: Setup, chat: string): Promise<number> {
  const text = `m${++counter}`
  const arrived = s.outside.expect(`re: ${text}`)
  const started = performance.now()
  const body = JSON.stringify({ userId: `user-${chat}`, chatId: chat, messageId: text, text })
  await new Promise<void>((resolve, reject) => {
    const req = http.request(s.webhookUrl, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`webhook answered ${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end(body)
  })
  const timeout = sleep(30_000).then(() => { throw new Error(`no reply to ${text} within 30 s`) })
  return (await Promise.race([arrived, timeout])) - started
}

interface LoopResult extends LatencySummary { conversations: number; messagesPerSec: number; seconds: number; errors: number }

async function closedLoop(s: Setup, conversations: number, seconds: number, warmup: number): Promise<LoopResult> {
  const run = async (duration: number, record: number[] | undefined) => {
    const end = performance.now() + duration * 1000
    let errors = 0
    let done = 0
    await Promise.all(Array.from({ length: conversations }, async (_, i) => {
      const chat = `chat-${conversations}-${i}`
      while (performance.now() < end) {
        try {
          const ms = await roundTrip(s, chat)
          record?.push(ms)
          done++
        } catch {
          errors++
        }
      }
    }))
    return { errors, done }
  }
  await run(warmup, undefined)
  const latencies: number[] = []
  const started = performance.now()
  const { errors, done } = await run(seconds, latencies)
  const elapsed = (performance.now() - started) / 1000
  return { ...summarize(latencies), conversations, seconds: Math.round(elapsed * 10) / 10, messagesPerSec: Math.round((done / elapsed) * 10) / 10, errors }
}

export async function benchIntegrations() {
  const seconds = num('BENCH_INTEGRATIONS_SECONDS', 8)
  const counts = (process.env.BENCH_INTEGRATIONS_CONVERSATIONS || '1,20').split(',').map((x) => Number(x.trim())).filter((n) => n > 0)
  const load = loadavg()[0]!
  const loops: LoopResult[] = []
  for (const conversations of counts) {
    process.stdout.write(`integrations bench: closed loop, ${conversations} outside chat(s) × 1 in flight, ${seconds} s…\n`)
    const s = await setUp()
    try {
      loops.push(await closedLoop(s, conversations, seconds, 2))
    } finally {
      await tearDown(s)
    }
    const r = loops.at(-1)!
    process.stdout.write(`  ${r.messagesPerSec} messages/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} errors\n`)
  }
  return {
    loops,
    machine: `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}`,
    loadAverage: { start: Math.round(load * 100) / 100, end: Math.round(loadavg()[0]! * 100) / 100 },
  }
}

type Result = Awaited<ReturnType<typeof benchIntegrations>>

export function resultsMarkdown(r: Result, command: string): string {
  return [
    '## Integrations (issue 19): an outside message → the bot\'s reply delivered to the outside service through an @botpress/sdk integration',
    '',
    `_Generated by \`${command}\` on ${new Date().toISOString()}; ${r.machine}; server: node dist/main.js (SQLite); the integration ` +
      '(test/fixtures/sdk-integrations/outside-chat.mjs) and the outside chat service (in the benchmark\'s process) on the same machine. Overwritten by every run._',
    '',
    `Machine load (1-minute load average) before the run ${r.loadAverage.start}, at its end ${r.loadAverage.end}.` +
      (r.loadAverage.start > cpus().length ? ' **The machine was busy with other work (load above its core count): these figures are a floor, not its capacity.**' : ''),
    '',
    'One message: webhook POST → webhook_received → the integration\'s getOrCreateUser/Conversation/Message → the bot\'s turn (sandboxed reply) → ' +
      'message_created from the conversation\'s log (lease, cursor, `parley:delivery` tag) → the integration\'s POST to the outside service (the measured end) → its ack.',
    '',
    '| outside chats × 1 in flight | messages/s | p50 | p99 | max | messages | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...r.loops.map((l) => `| ${l.conversations} | ${l.messagesPerSec} | ${l.p50} ms | ${l.p99} ms | ${l.max} ms | ${l.count} | ${l.errors} |`),
    '',
    'Reproduce: `npm run bench -- integrations` (knobs `BENCH_INTEGRATIONS_SECONDS`, `BENCH_INTEGRATIONS_CONVERSATIONS`, e.g. `1,20`).',
  ].join('\n')
}

runBenchScript({ moduleUrl: import.meta.url, section: 'integrations', knobs: 'BENCH_INTEGRATIONS_', run: benchIntegrations, markdown: resultsMarkdown })
