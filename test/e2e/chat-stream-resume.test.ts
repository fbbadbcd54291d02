/**
 * Stream resume under stress (issue #13, item 9: "a resuming stream missed messages once").
 *
 * Several writers post messages over real HTTP into a few conversations, some requests at once so
 * that the group commit (SQLite) and the batched append statement (PostgreSQL) put several appends
 * in one commit. One listener per conversation, on a raw HTTP connection, is cut over and over at
 * every kind of position: right after the response headers (the server is replaying), between two
 * frames, inside a frame (in its id line, just after it, inside the data line, just before the
 * blank line that ends it), after a byte count whatever it falls on, after reconnecting onto a
 * backlog longer than a replay page, and while it is live. Each time it reconnects with
 * `Last-Event-ID` = the id of the last COMPLETE frame it parsed (keep-alive pings included: they
 * carry the stream's position), as a WHATWG EventSource does. At the end every conversation's
 * received signals must be its whole log, each exactly once and in order, and every
 * acknowledged message must be among them. Meanwhile events, message deletions and participants
 * added and removed (store transactions, not the group commit) race the appends. On PostgreSQL a
 * second instance runs on the same database: writers post to either, and a listener resumes on the
 * other instance than the one it was cut from (two append statements at once on one conversation).
 * A second test checks, below HTTP, the invariant all of this rests on: a reader following
 * signalsSince never gets seq n+1 before seq n is readable.
 *
 * CI size is bounded; a long run: PARLEY_STRESS_MESSAGES=10000 PARLEY_STRESS_CUTS=300
 * PARLEY_STRESS_SEED=7 npx vitest run --project sqlite test/e2e/chat-stream-resume.test.ts
 * PARLEY_STRESS_CLIENT=naive models a client that takes `id:` when it parses the line rather than
 * when the frame completes (the npm `eventsource@2` package, which @botpress/chat uses in Node,
 * does): that run is expected to fail, with messages missing and no duplicates, after cuts that
 * fall inside a frame past its id line.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { freePort, startParley, type Harness } from '../helpers/harness.js'
import { randomUUID } from 'node:crypto'
import { connectJwt, sleep } from './helpers.js'
import { seededRandom } from '../helpers/seeded-random.js'

const MESSAGES = Number(process.env.PARLEY_STRESS_MESSAGES ?? 1200)
const CUTS = Number(process.env.PARLEY_STRESS_CUTS ?? 60)
const SEED = Number(process.env.PARLEY_STRESS_SEED ?? 13)
/** Model a client that records `id:` as soon as it parses the line, not when the frame completes (eventsource@2 does). */
const NAIVE_ID = process.env.PARLEY_STRESS_CLIENT === 'naive'
const CONVERSATIONS = 3
const WRITERS_PER_CONVERSATION = 3
/** Larger than the server's replay page (REPLAY_BATCH, 200), so a resume after it spans pages. */
const BACKLOG = 260

/** Where, inside a frame, a mid-frame cut falls. */
type Inside = 'first-byte' | 'in-id' | 'after-id-line' | 'in-data' | 'before-blank-line' | 'random'

/** How one connection ends. */
type Cut =
  | { kind: 'headers' } // as soon as the status line and headers are in: the server is replaying
  | { kind: 'between'; frames: number } // after `frames` complete frames, exactly at a frame boundary
  | { kind: 'inside'; frames: number; at: Inside } // after `frames` complete frames, inside the next one
  | { kind: 'bytes'; bytes: number } // after that many body bytes, wherever that falls

interface Plan {
  cut: Cut
  /** Before reconnecting: none, a short pause, or until a backlog longer than a replay page built up. */
  wait: 'none' | 'short' | 'backlog'
}

const INSIDE: Inside[] = ['first-byte', 'in-id', 'after-id-line', 'in-data', 'before-blank-line', 'random']

/** Every kind of cut at least once (deterministic), then seeded random ones. */
function plans(count: number, random: () => number): Plan[] {
  const fixed: Plan[] = [
    { cut: { kind: 'headers' }, wait: 'none' },
    { cut: { kind: 'headers' }, wait: 'backlog' },
    { cut: { kind: 'between', frames: 0 }, wait: 'none' },
    { cut: { kind: 'between', frames: 1 }, wait: 'none' },
    { cut: { kind: 'between', frames: 199 }, wait: 'backlog' }, // at the end of a replay page
    { cut: { kind: 'between', frames: 200 }, wait: 'backlog' },
    { cut: { kind: 'between', frames: 201 }, wait: 'backlog' },
    ...INSIDE.map((at): Plan => ({ cut: { kind: 'inside', frames: 0, at }, wait: 'none' })),
    ...INSIDE.map((at): Plan => ({ cut: { kind: 'inside', frames: 3, at }, wait: 'short' })),
    ...INSIDE.map((at): Plan => ({ cut: { kind: 'inside', frames: 120, at }, wait: 'short' })),
    { cut: { kind: 'bytes', bytes: 1 }, wait: 'none' },
    { cut: { kind: 'bytes', bytes: 700 }, wait: 'short' },
  ]
  const out = fixed.slice(0, count)
  while (out.length < count) {
    const r = random()
    const frames = random() < 0.5 ? Math.floor(random() * 8) : Math.floor(random() * 250)
    const cut: Cut =
      r < 0.1 ? { kind: 'headers' }
        : r < 0.45 ? { kind: 'between', frames }
          : r < 0.8 ? { kind: 'inside', frames, at: INSIDE[Math.floor(random() * INSIDE.length)]! }
            : { kind: 'bytes', bytes: 1 + Math.floor(random() * 60_000) }
    const w = random()
    out.push({ cut, wait: w < 0.55 ? 'none' : w < 0.95 ? 'short' : 'backlog' })
  }
  return out
}

interface Received {
  seq: number
  type: string
  id: string | undefined
}

interface Anomaly {
  connection: number
  lastEventId: number
  what: string
}

/** The byte offset, inside a complete frame `frame` (which ends with "\n\n"), where an 'inside' cut falls. */
function cutOffset(frame: Buffer, at: Inside, random: () => number): number {
  const idLineEnd = frame.indexOf('\n') + 1
  switch (at) {
    case 'first-byte':
      return 1
    case 'in-id':
      return Math.max(1, Math.min(idLineEnd - 2, 4))
    case 'after-id-line':
      return idLineEnd
    case 'in-data':
      return idLineEnd + Math.floor((frame.length - idLineEnd - 2) / 2)
    case 'before-blank-line':
      return frame.length - 1
    case 'random':
      return 1 + Math.floor(random() * (frame.length - 1))
  }
}

/**
 * A listener on one conversation that follows a list of cut plans, then stays connected. It keeps
 * the id of the last complete frame and resumes from it; a partial frame is dropped, as a WHATWG
 * EventSource drops it when the connection ends before the blank line.
 */
class CuttingListener {
  readonly received: Received[] = []
  readonly anomalies: Anomaly[] = []
  lastEventId = 0
  connections = 0
  private request: http.ClientRequest | undefined
  private stopped = false
  private wake: (() => void) | undefined
  private loop: Promise<void> | undefined

  constructor(
    private readonly url: (connection: number) => URL,
    private readonly userKey: string,
    private readonly plans: Plan[],
    private readonly random: () => number,
    private readonly backlogReady: (since: number) => boolean,
    private readonly ackedCount: () => number,
    private readonly writersDone: () => boolean,
    private readonly lastSeq: () => number,
  ) {}

  start(): void {
    this.loop = this.run()
  }

  /** Ends the final connection and waits for the loop. */
  async stop(): Promise<void> {
    this.stopped = true
    this.request?.destroy()
    this.wake?.()
    await this.loop
  }

  /** Waits until `predicate` holds or the deadline passes (the caller then reports what is missing). */
  async waitFor(predicate: () => boolean, deadline: number): Promise<boolean> {
    while (!predicate()) {
      if (Date.now() > deadline) return false
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    return true
  }

  private async run(): Promise<void> {
    for (const plan of this.plans) {
      if (this.stopped) return
      const ackedAtCut = this.ackedCount()
      const t0 = Date.now()
      await this.connect(plan.cut)
      if (process.env.PARLEY_STRESS_DEBUG) console.log(`conn ${this.connections} ${JSON.stringify(plan)} ${Date.now() - t0} ms`)
      if (plan.wait === 'short') await sleep(Math.floor(this.random() * 15))
      else if (plan.wait === 'backlog') {
        const deadline = Date.now() + 10_000
        while (!this.backlogReady(ackedAtCut) && Date.now() < deadline) await sleep(5)
      }
    }
    // Live until stopped.
    if (!this.stopped) await this.connect(undefined)
  }

  /** One connection, until the cut (or the end of the stream, or stop()). */
  private connect(cut: Cut | undefined): Promise<void> {
    const connection = ++this.connections
    const resumeFrom = this.lastEventId
    let lastSignalSeq = resumeFrom
    let frames = 0
    let bodyBytes = 0
    let pending: Buffer = Buffer.alloc(0)
    return new Promise<void>((resolve) => {
      let done = false
      const finish = () => {
        if (done) return
        done = true
        clearInterval(idle)
        request.destroy()
        resolve()
      }
      const anomaly = (what: string) => this.anomalies.push({ connection, lastEventId: resumeFrom, what })
      /** A complete frame: `bytes` ends with the blank line. */
      const dispatch = (bytes: Buffer) => {
        frames++
        let id: string | undefined
        const data: string[] = []
        for (const line of bytes.toString('utf8').split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trimStart()
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
        }
        const json = JSON.parse(data.join('\n')) as { type: string; data: { id?: string } }
        const seq = Number(id)
        if (id === undefined || !Number.isSafeInteger(seq)) return anomaly(`frame without a numeric id: ${bytes.toString('utf8').slice(0, 80)}`)
        if (json.type === 'ping') {
          // A ping carries the stream's position: never beyond what this connection delivered.
          if (seq !== lastSignalSeq) anomaly(`ping id ${seq} while the last signal delivered was ${lastSignalSeq}`)
        } else {
          // Gaps are legitimate only where a message was deleted (its creation is no longer in the log).
          if (seq <= lastSignalSeq) anomaly(`signal ${seq} after ${lastSignalSeq}`)
          lastSignalSeq = seq
          this.received.push({ seq, type: json.type, id: json.data.id })
        }
        this.lastEventId = seq
      }
      // Once the writers are done and this connection has caught up, a plan waiting for frames that
      // will never come cuts where it is (between frames, idle).
      const idle = setInterval(() => {
        if (cut !== undefined && this.writersDone() && pending.length === 0 && this.lastEventId >= this.lastSeq()) finish()
      }, 25)
      const onBody = (chunk: Buffer) => {
        if (done) return
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        for (;;) {
          const end = pending.indexOf('\n\n')
          if (cut?.kind === 'bytes') {
            // Frames wholly inside the first `bytes` body bytes count; the rest never arrived.
            const room = cut.bytes - bodyBytes
            if (end < 0 ? pending.length >= room : end + 2 > room) return finish()
          }
          if (end < 0) return
          const frame = pending.subarray(0, end + 2)
          if (cut?.kind === 'between' && frames === cut.frames) return finish()
          if (cut?.kind === 'inside' && frames === cut.frames) {
            // The first `offset` bytes of this frame arrived, the rest did not: nothing to dispatch. A
            // client that takes the id when it parses the id line (eventsource@2, PARLEY_STRESS_CLIENT=naive)
            // resumes after this frame although it never got it.
            const offset = cutOffset(frame, cut.at, this.random)
            if (NAIVE_ID && offset >= frame.indexOf('\n') + 1) this.lastEventId = Number(frame.subarray(0, frame.indexOf('\n')).toString().slice(3).trim())
            return finish()
          }
          pending = pending.subarray(end + 2)
          bodyBytes += frame.length
          dispatch(frame)
        }
      }
      const request = http.request(this.url(connection), {
        agent: false,
        headers: {
          accept: 'text/event-stream',
          'cache-control': 'no-cache',
          'x-user-key': this.userKey,
          'last-event-id': String(resumeFrom),
        },
      })
      this.request = request
      request.on('response', (response) => {
        if (response.statusCode !== 200) {
          anomaly(`HTTP ${response.statusCode}`)
          return finish()
        }
        if (cut?.kind === 'headers') return finish()
        response.on('data', onBody)
        response.on('end', () => {
          if (!done) anomaly('the server ended the stream')
          finish()
        })
        response.on('error', finish)
      })
      request.on('error', finish)
      request.on('close', finish)
      request.end()
    })
  }
}

/**
 * On PostgreSQL, a second Parley process's worth (own pool, own append queue, own LISTEN connection)
 * on the same database, so that two append statements run at once on one conversation and a
 * listener resumes on the other instance than the one it was cut from.
 */
async function secondInstance(h: Harness): Promise<{ chatUrl: string; store: KyselyStore; close(): Promise<void> }> {
  const url = h.databaseUrl!
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-'))
  const port = await freePort()
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: String(port), PARLEY_DATABASE_URL: url }, { sseKeepAliveMs: KEEP_ALIVE_MS, databasePoolSize: 5 })
  const adapters = await createAdapters(config)
  const app = await buildApp({ config, ...adapters, logger: false })
  await app.listen({ port, host: '127.0.0.1' })
  return {
    chatUrl: `http://127.0.0.1:${port}/${h.credentials.chat.webhookId}`,
    store: adapters.store,
    async close() {
      await app.close()
      await closeAdapters(adapters)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Frequent keep-alives: pings (which carry the position as their id) interleave with signals. */
const KEEP_ALIVE_MS = 20

describe('e2e: stream resume under stress (Last-Event-ID at every cut position)', () => {
  let h: Harness
  let second: Awaited<ReturnType<typeof secondInstance>> | undefined

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { sseKeepAliveMs: KEEP_ALIVE_MS } })
    if (h.storeKind === 'postgres') second = await secondInstance(h)
  })
  afterAll(async () => {
    await second?.close()
    await h?.close()
  })

  it(`at least ${MESSAGES} messages into ${CONVERSATIONS} conversations, ${CUTS} cuts per listener (seed ${SEED}): every signal exactly once, in order`, async () => {
    const apiUrl = h.credentials.chat.url
    // Writers post to either instance; a listener alternates between them from one connection to the next.
    const apiUrls = second ? [apiUrl, second.chatUrl] : [apiUrl]
    const random = seededRandom(SEED)
    const owner = await connectJwt(h)
    const integration = (await h.store.getIntegrationByWebhookId(h.credentials.chat.webhookId))!
    const writers = await Promise.all(Array.from({ length: CONVERSATIONS * WRITERS_PER_CONVERSATION }, () => connectJwt(h)))

    interface Target {
      id: string
      acked: string[]
      /** Messages deleted meanwhile (a resume after the deletion no longer replays their creation). */
      deleted: Set<string>
      /** The highest seq acknowledged (createMessage answers carry no seq: counted from the participants' signals). */
      lastSeq: number
      writers: typeof writers
      listener?: CuttingListener
    }
    const targets: Target[] = []
    for (let c = 0; c < CONVERSATIONS; c++) {
      const { conversation } = await owner.createConversation({})
      const mine = writers.slice(c * WRITERS_PER_CONVERSATION, (c + 1) * WRITERS_PER_CONVERSATION)
      for (const w of mine) await owner.addParticipant({ conversationId: conversation.id, userId: w.user.id })
      targets.push({ id: conversation.id, acked: [], deleted: new Set(), lastSeq: Infinity, writers: mine })
    }

    let writing = writers.length
    for (const t of targets) {
      const listener = new CuttingListener(
        (connection) => new URL(`${apiUrls[connection % apiUrls.length]}/conversations/${t.id}/listen`), owner.user.key, plans(CUTS, random), seededRandom(SEED * 100 + targets.indexOf(t)),
        (since) => t.acked.length - since >= BACKLOG || writing === 0, () => t.acked.length, () => writing === 0, () => t.lastSeq,
      )
      t.listener = listener
      listener.start()
    }

    // Writers: each posts its share in bursts of 1 to 6 concurrent requests.
    const failures: string[] = []
    // Each writer posts at least its share, and goes on (up to 4 times it) while a listener still has
    // cuts to make, so that the cuts race the appends.
    const perWriter = Math.ceil(MESSAGES / writers.length)
    const cutting = () => targets.some((t) => t.listener!.connections <= CUTS)
    const write = async (t: Target, w: (typeof writers)[number], index: number) => {
      const burstRandom = seededRandom(SEED * 1000 + index)
      let sent = 0
      while (sent < perWriter || (cutting() && sent < 4 * perWriter)) {
        const burst = 1 + Math.floor(burstRandom() * 6)
        await Promise.all(Array.from({ length: burst }, async (_, k) => {
          const big = burstRandom() < 0.05
          const text = `w${index}-${sent + k} ${'x'.repeat(big ? 20_000 + Math.floor(burstRandom() * 30_000) : Math.floor(burstRandom() * 400))}`
          const response = await fetch(`${apiUrls[Math.floor(burstRandom() * apiUrls.length)]}/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-user-key': w.user.key },
            body: JSON.stringify({ conversationId: t.id, payload: { type: 'text', text } }),
          })
          const body = (await response.json()) as { message?: { id: string } }
          if (response.status !== 201 || !body.message) failures.push(`HTTP ${response.status}: ${JSON.stringify(body).slice(0, 200)}`)
          else t.acked.push(body.message.id)
        }))
        sent += burst
      }
    }
    // Meanwhile, in each conversation, the other kinds of signal: events, deletions, and participants
    // added and removed (those go through a store transaction, not the appends' group commit).
    const pick = seededRandom(SEED * 31)
    const call = async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
      const response = await fetch(`${apiUrls[Math.floor(pick() * apiUrls.length)]}${path}`, {
        method, headers: { 'x-user-key': owner.user.key, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      const text = await response.text()
      if (response.status >= 300) failures.push(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 200)}`)
      return text === '' ? undefined : (JSON.parse(text) as { message?: { id: string }; event?: { id: string } })
    }
    const churn = async (t: Target, index: number) => {
      const churnRandom = seededRandom(SEED * 7919 + index)
      const mine: string[] = []
      const spare = await connectJwt(h)
      let member = false
      while (writing > 0) {
        const r = churnRandom()
        if (r < 0.35) {
          await call('POST', '/events', { conversationId: t.id, payload: { n: index } })
        } else if (r < 0.6) {
          const created = await call('POST', '/messages', { conversationId: t.id, payload: { type: 'text', text: `owner ${mine.length}` } })
          if (created?.message) {
            t.acked.push(created.message.id)
            mine.push(created.message.id)
          }
        } else if (r < 0.8 && mine.length > 0) {
          const id = mine.splice(Math.floor(churnRandom() * mine.length), 1)[0]!
          await call('DELETE', `/messages/${id}`)
          t.deleted.add(id)
        } else if (r >= 0.8) {
          if (member) await call('DELETE', `/conversations/${t.id}/participants/${spare.user.id}`)
          else await call('POST', `/conversations/${t.id}/participants`, { userId: spare.user.id })
          member = !member
        }
      }
    }
    const started = Date.now()
    await Promise.all([
      ...targets.flatMap((t, c) => t.writers.map((w, i) => write(t, w, c * WRITERS_PER_CONVERSATION + i).finally(() => writing--))),
      ...targets.flatMap((t, c) => [0, 1, 2].map((k) => churn(t, c * 3 + k))),
    ])
    for (const t of targets) t.lastSeq = (await h.store.getConversation(integration.id, t.id))!.lastSeq
    console.log(`[${h.storeKind}${second ? ', 2 instances' : ''}] writers done after ${Date.now() - started} ms; connections so far: ${targets.map((t) => t.listener!.connections).join(', ')}`)
    expect(failures).toEqual([])

    const report: string[] = []
    const kinds: number[] = []
    for (const t of targets) {
      const listener = t.listener!
      expect(t.acked.length).toBeGreaterThanOrEqual(MESSAGES / CONVERSATIONS)
      const conversation = { lastSeq: t.lastSeq }
      const complete = await listener.waitFor(() => listener.lastEventId >= conversation.lastSeq && listener.connections > CUTS, Date.now() + 60_000)
      await listener.stop()
      // The whole log as the store has it, page by page.
      const log: Received[] = []
      for (let after = 0; ;) {
        const page = await h.store.signalsSince(integration.id, t.id, after, 500)
        if (page.length === 0) break
        for (const s of page) {
          const id = s.kind === 'message_created' ? s.message.id : s.kind === 'event_created' ? s.event.id : s.kind === 'message_deleted' ? s.id : undefined
          log.push({ seq: s.seq, type: s.kind, id })
        }
        after = page[page.length - 1]!.seq
      }
      // Received = the log, plus (at their own seq) creations of messages deleted since: each once, in order.
      const receivedSeqs = new Set(listener.received.map((r) => r.seq))
      const missing = log.filter((s) => !receivedSeqs.has(s.seq)).map((s) => s.seq)
      const logSeqs = new Set(log.map((s) => s.seq))
      const unexpected = listener.received.filter((r) => !logSeqs.has(r.seq) && !(r.type === 'message_created' && t.deleted.has(r.id!)))
      const messageIds = new Set(listener.received.map((r) => r.id))
      const ackedMissing = t.acked.filter((id) => !messageIds.has(id) && !t.deleted.has(id))
      if (!complete || missing.length > 0 || unexpected.length > 0 || ackedMissing.length > 0 || listener.anomalies.length > 0) {
        report.push(`conversation ${t.id}: last seq ${conversation.lastSeq}, received up to ${listener.lastEventId} over ${listener.connections} connections; ` +
          `missing seqs ${JSON.stringify(missing.slice(0, 20))} (${missing.length}), unexpected ${JSON.stringify(unexpected.slice(0, 5))}, ` +
          `acked messages missing ${ackedMissing.length}; anomalies ${JSON.stringify(listener.anomalies.slice(0, 10))}`)
      }
      expect(listener.received.length).toBeGreaterThan(0)
      if (report.length === 0) {
        expect(listener.received.filter((r) => logSeqs.has(r.seq))).toEqual(log)
        expect(log.filter((s) => s.type === 'message_created').length).toBe(t.acked.length - t.deleted.size)
        kinds.push(new Set(log.map((s) => s.type)).size)
      }
    }
    console.log(`[${h.storeKind}] done after ${Date.now() - started} ms`)
    expect(report).toEqual([])
    // All five kinds of signal went through the cuts.
    expect(kinds).toEqual(targets.map(() => 5))
  }, 600_000)
  it('a reader following signalsSince never gets a seq before a lower one is readable (appends of two instances, group commits, transactions)', async () => {
    // The stream's correctness rests on this: signalsSince(after) answers after+1, after+2, ... without
    // a hole, however the writes race (a hole would move a stream's position past a seq for good).
    const owner = await connectJwt(h)
    const members = await Promise.all([connectJwt(h), connectJwt(h)])
    const { conversation } = await owner.createConversation({})
    for (const m of members) await owner.addParticipant({ conversationId: conversation.id, userId: m.user.id })
    const integration = (await h.store.getIntegrationByWebhookId(h.credentials.chat.webhookId))!
    const stores = second ? [h.store, second.store] : [h.store]
    const APPENDS = Math.max(600, Math.floor(MESSAGES / 2))
    let appended = 0
    let done = false
    const holes: string[] = []
    // Readers: each follows the log from 0, as a stream does, on every store.
    const reader = async (store: KyselyStore) => {
      let position = 0
      let reads = 0
      while (!done || position < (await store.getConversation(integration.id, conversation.id))!.lastSeq) {
        const batch = await store.signalsSince(integration.id, conversation.id, position, 200)
        reads++
        for (const signal of batch) {
          if (signal.seq !== position + 1) holes.push(`after ${position} came ${signal.seq} (read ${reads})`)
          position = signal.seq
        }
        // A turn of the event loop between reads, as between a stream's notifications (on SQLite every
        // call here may resolve without one, and the group commit runs in setImmediate).
        await new Promise((resolve) => setImmediate(resolve))
      }
      return position
    }
    // Writers: appends (batched by the group commit) on every store, and participants added and
    // removed (a transaction each) meanwhile.
    const writer = async (store: KyselyStore, index: number) => {
      while (appended < APPENDS) {
        appended++
        const message = await store.appendMessage({
          id: randomUUID(), integrationId: integration.id, conversationId: conversation.id, userId: members[index % 2]!.user.id, isBot: false,
          payload: { type: 'text', text: `m${appended}` }, metadata: null, requireParticipant: true, now: Date.now(),
        })
        if (!message) holes.push(`append refused (writer ${index})`)
      }
    }
    const churn = async (store: KyselyStore) => {
      const spare = await connectJwt(h)
      while (appended < APPENDS) {
        await store.addParticipant(integration.id, conversation.id, spare.user.id, Date.now())
        await store.removeParticipant(integration.id, conversation.id, spare.user.id, Date.now())
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
    const readers = stores.flatMap((store) => [reader(store), reader(store)])
    await Promise.all([...stores.flatMap((store, s) => Array.from({ length: 8 }, (_, i) => writer(store, s * 8 + i))), churn(stores[stores.length - 1]!)])
    done = true
    const positions = await Promise.all(readers)
    const last = (await h.store.getConversation(integration.id, conversation.id))!.lastSeq
    expect(holes).toEqual([])
    expect(positions).toEqual(readers.map(() => last))
  }, 300_000)
})
