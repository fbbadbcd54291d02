/**
 * Containment benchmark (issue #13): what one bot's hostile code costs the server and the other bots.
 *
 * The server is the compiled build (`node dist/main.js`, as `npm start` runs it, default limits: 5 s per
 * hook, 128 MB per bot) in its own process, on every core of the machine (not pinned). This process is the load generator: a well-behaved echo bot is
 * talked to at a fixed rate (open loop, BENCH_CONTAINMENT_RATE turns/s, default 40, over 8 conversations)
 * the whole time, through the official `@botpress/chat` client; latency runs from each message's send to
 * its reply on the stream. First a baseline window without any bomb, then, for each bomb, a window during
 * which a second bot runs that bomb again and again (each attack's turn followed by a message whose reply
 * shows the turn is over).
 *
 * For each bomb: how long one attack's turn took to be stopped (median over the window's attacks), the
 * server's RSS (from /proc, threads included) before the window, at its peak and 10 s after the last
 * attack, and the other bot's p50/p99 during the window next to the baseline window's.
 *
 * `tsx bench/containment.ts` (builds first unless BENCH_SKIP_BUILD=1); writes its section of
 * bench/RESULTS.md. BENCH_CONTAINMENT_SECONDS sets each window (default 12). No pass/fail: figures only.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import * as chat from '@botpress/chat'
import { Client } from '@botpress/client'
import { gitRevision } from './lib/load.js'
import { writeResultsSection } from './lib/results.js'
import { ROOT, num, sleep, startServer, stopServer, type Server } from './lib/servers.js'

const SECONDS = num('BENCH_CONTAINMENT_SECONDS', 12)
const RATE = num('BENCH_CONTAINMENT_RATE', 40)
const CONVERSATIONS = 8
const SETTLE_MS = 10_000

const ECHO = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: 'echo ' + event.payload.text } })
  },
}`

/** The bombs: the statements the attacking bot's afterIncoming runs for the message "attack". */
const BOMBS: Array<{ name: string; body: string }> = [
  { name: 'allocation loop (arrays of 1e5 until the memory limit)', body: 'const a = []; for (;;) a.push(new Array(100000).fill(1.5))' },
  { name: 'busy loop (while (true) {})', body: 'while (true) {}' },
  { name: 'microtask loop (for (;;) await null)', body: 'for (;;) await null' },
  { name: 'promise chain awaited (nested, grows memory)', body: 'const f = () => Promise.resolve().then(f); await f()' },
  { name: 'promise chain left running', body: 'const f = () => Promise.resolve().then(f); f()' },
]

const attackerCode = (body: string) => String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    if (event.payload.text === 'attack') { ${body} }
    await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
  },
}`

interface Percentiles { count: number; p50: number; p99: number; lost: number }
interface BombResult {
  name: string
  attacks: number
  stopMs: number
  rssBeforeMb: number
  rssPeakMb: number
  rssAfterMb: number
  other: Percentiles
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024)
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50)

/** One user in one conversation, with its replies by text. */
class Line {
  private waiting = new Map<string, (at: number) => void>()
  private constructor(readonly user: chat.AuthenticatedClient, readonly conversationId: string) {}

  static async open(url: string): Promise<Line> {
    const user = await chat.Client.connect({ apiUrl: url })
    const { conversation } = await user.createConversation({})
    const listener = await user.listenConversation({ id: conversation.id })
    const line = new Line(user, conversation.id)
    listener.on('message_created', (m) => {
      if (!m.isBot || m.payload.type !== 'text') return
      const text = (m.payload as { text: string }).text
      line.waiting.get(text)?.(Date.now())
      line.waiting.delete(text)
    })
    return line
  }

  /** Sends `text`; resolves with the time its reply (`prefix + text`) arrived, or undefined after `timeoutMs`. */
  ask(text: string, prefix: string, timeoutMs = 30_000): Promise<number | undefined> {
    const reply = new Promise<number | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(prefix + text)
        resolve(undefined)
      }, timeoutMs)
      this.waiting.set(prefix + text, (at) => {
        clearTimeout(timer)
        resolve(at)
      })
    })
    void this.user.createMessage({ conversationId: this.conversationId, payload: { type: 'text', text } }).catch(() => {})
    return reply
  }
}

/** Talks to the echo bot at RATE turns/s until `stop` resolves; returns the latencies (undefined: lost). */
const DEBUG = process.env.BENCH_CONTAINMENT_DEBUG === '1'
async function steadyLoad(lines: Line[], stop: Promise<void>): Promise<Array<number | undefined>> {
  const latencies: Promise<number | undefined>[] = []
  const slow: Array<[number, number]> = []
  let done = false
  void stop.then(() => {
    done = true
  })
  const interval = 1000 / RATE
  const start = Date.now()
  for (let i = 0; !done; i++) {
    const due = start + i * interval
    const wait = due - Date.now()
    if (wait > 0) await sleep(wait)
    const text = `n${i}`
    const sentAt = due
    latencies.push(lines[i % lines.length]!.ask(text, 'echo ').then((at) => {
      if (at !== undefined && at - sentAt > 40) slow.push([sentAt - start, at - sentAt])
      return at === undefined ? undefined : at - sentAt
    }))
  }
  const all = await Promise.all(latencies)
  if (DEBUG) process.stdout.write(`  slow turns [sent at ms into the window, latency]: ${JSON.stringify(slow)}\n`)
  return all
}

function percentiles(values: Array<number | undefined>): Percentiles {
  const got = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b)
  return { count: got.length, p50: percentile(got, 50), p99: percentile(got, 99), lost: values.length - got.length }
}

async function main(): Promise<void> {
  if (process.env.BENCH_SKIP_BUILD !== '1') execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
  // On every core, as `npm start` runs it: a bomb burns one core, as it would on a real server.
  const server: Server = await startServer('containment', [join(ROOT, 'dist/main.js')], {}, { pin: false })
  try {
    const credentials = JSON.parse(readFileSync(join(server.dataDir, 'data', 'credentials.json'), 'utf8')) as { apiUrl: string; token: string; workspaceId: string }
    const admin = new Client({ apiUrl: `http://127.0.0.1:${server.port}`, token: credentials.token, workspaceId: credentials.workspaceId })
    const makeBot = async (name: string, code: string) => {
      const { bot } = await admin.createBot({ name })
      await admin.updateBot({ id: bot.id, code })
      const { bot: full } = await admin.getBot({ id: bot.id })
      return full.integrations.chat!.webhookUrl
    }
    const echoUrl = await makeBot('echo', ECHO)
    const lines = await Promise.all(Array.from({ length: CONVERSATIONS }, () => Line.open(echoUrl)))
    // warm-up: every conversation answered, the sandbox's workers started
    for (const line of lines) await line.ask('warm', 'echo ')
    await steadyLoad(lines, sleep(3000).then(() => undefined))

    const pid = server.child.pid!
    process.stdout.write(`baseline: ${SECONDS} s at ${RATE} turns/s…\n`)
    const baseline = percentiles(await steadyLoad(lines, sleep(SECONDS * 1000).then(() => undefined)))
    process.stdout.write(`  p50 ${baseline.p50} ms, p99 ${baseline.p99} ms (${baseline.count} turns, ${baseline.lost} lost)\n`)

    const results: BombResult[] = []
    for (const bomb of BOMBS) {
      const attackerUrl = await makeBot(`bomb ${bomb.name}`, attackerCode(bomb.body))
      const attacker = await Line.open(attackerUrl)
      await attacker.ask('warm', 'ok ')
      const rssBefore = rssMb(pid)
      let peak = rssBefore
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssMb(pid))
      }, 50)
      process.stdout.write(`${bomb.name}: ${SECONDS} s…\n`)
      const windowEnd = Date.now() + SECONDS * 1000
      const stops: number[] = []
      const attacks = (async () => {
        for (let i = 0; Date.now() < windowEnd; i++) {
          const t = Date.now()
          if (DEBUG) process.stdout.write(`  attack ${i} at ${t - (windowEnd - SECONDS * 1000)} ms\n`)
          void attacker.user.createMessage({ conversationId: attacker.conversationId, payload: { type: 'text', text: 'attack' } }).catch(() => {})
          const after = await attacker.ask(`after ${i}`, 'ok ', 60_000)
          if (after === undefined) throw new Error(`${bomb.name}: the attacking bot's conversation stopped answering`)
          stops.push(after - t)
        }
      })()
      const other = percentiles(await steadyLoad(lines, attacks))
      await sleep(SETTLE_MS)
      clearInterval(sampler)
      const result: BombResult = { name: bomb.name, attacks: stops.length, stopMs: median(stops), rssBeforeMb: rssBefore, rssPeakMb: peak, rssAfterMb: rssMb(pid), other }
      results.push(result)
      process.stdout.write(`  ${JSON.stringify(result)}\n`)
    }
    writeResultsSection('containment', markdown(baseline, results))
    process.stdout.write(`\n${markdown(baseline, results)}\n`)
  } finally {
    await stopServer(server).catch((err: unknown) => process.stderr.write(`${String(err)}\n`))
    rmSync(server.dataDir, { recursive: true, force: true })
  }
}

function markdown(baseline: Percentiles, results: BombResult[]): string {
  const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}×`
  const rows = results.map((r) =>
    `| ${r.name} | ${r.attacks} | ${r.stopMs} ms | ${r.rssBeforeMb} / ${r.rssPeakMb} / ${r.rssAfterMb} MB | ${r.other.p50} / ${r.other.p99} ms | ${ratio(r.other.p99, baseline.p99)} | ${r.other.lost} |`)
  return `## Containment (issue #13): one bot's hostile code, the server and another bot

_Generated by \`npx tsx bench/containment.ts\` (\`npm run bench -- containment\`) at ${gitRevision()}, ${new Date().toISOString().slice(0, 10)}.
The compiled server with default limits (5 s per hook, 128 MB per bot) on all ${cpus().length} cores, in the same machine as this load generator; an echo bot talked to at ${RATE} turns/s over
${CONVERSATIONS} conversations with the official chat client during ${SECONDS} s windows, while another bot runs a bomb
again and again. Stop time: from an attack's message to the reply to the next message of that conversation (the
attack's turn is over), median. RSS: the server process (worker threads included), before the window / peak / ${SETTLE_MS / 1000} s after._

Other bot without any bomb (baseline): **p50 ${baseline.p50} ms, p99 ${baseline.p99} ms** (${baseline.count} turns, ${baseline.lost} lost).

| bomb | attacks | stop time | server RSS before / peak / after | other bot p50 / p99 | p99 vs baseline | other bot's turns lost |
|---|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}
`
}

await main()
