/**
 * Issue #5 end to end: two `parley serve` processes on one PostgreSQL database behind Debian's
 * nginx (round robin, unbuffered streaming), driven through the official clients and plain HTTP.
 * Cross-instance delivery, one bot reply per user message whichever instance took the message,
 * and a kill -9 of the instance running a turn: the stream resumes through nginx with
 * Last-Event-ID without a gap, the survivor takes the conversation's lease over and every message
 * gets exactly one reply.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from '../cli/helpers.js'
import { listenRaw, type SseStream } from '../e2e/sse-reader.js'
import { dropDatabase, freshDatabase } from '../helpers/pg.js'
import type { Nginx } from '../helpers/nginx.js'
import { createBot, listAll, Talk, textOf, type TestBot } from '../runtime/helpers.js'
import { eventually, freePort, nginxOrSkip, Processes, query, readCredentials, type Instance } from './helpers.js'

/** Replies `echo: <text>`; `slow N` first says it is working, then runs N ms of CPU, then echoes. */
const BOT_CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    const text = event.payload.text
    const say = (t) => client.createMessage({ conversationId: event.conversationId, payload: { type: 'text', text: t } })
    if (text.startsWith('slow ')) {
      await say('working on: ' + text)
      const until = Date.now() + Number(text.slice(5))
      while (Date.now() < until) {}
    }
    await say('echo: ' + text)
  },
}
`

const nginxBinary = nginxOrSkip()

describe.skipIf(!nginxBinary)('two Parley instances behind nginx on one PostgreSQL', () => {
  const procs = new Processes()
  let databaseUrl: string
  let a: Instance
  let b: Instance
  let lb: Nginx
  let bot: TestBot
  let parley: { baseUrl: string; credentials: { token: string; workspaceId: string } }

  beforeAll(async () => {
    await ensureBuilt()
    databaseUrl = await freshDatabase()
    const [portA, portB, portLb] = [await freePort(), await freePort(), await freePort()]
    const publicUrl = `http://127.0.0.1:${portLb}`
    const dataDir = procs.tempDir('parley-cluster-') // shared, as the README asks (credentials.json, blobs)
    ;[a, b] = await Promise.all([
      procs.start('A', { port: portA, databaseUrl, dataDir, publicUrl }).started,
      procs.start('B', { port: portB, databaseUrl, dataDir, publicUrl }).started,
    ])
    lb = await procs.nginx([`127.0.0.1:${portA}`, `127.0.0.1:${portB}`], portLb)
    parley = { baseUrl: lb.url, credentials: readCredentials(dataDir) }
    bot = await createBot(parley, BOT_CODE)
  }, 240_000)

  afterAll(async () => {
    await procs.stopAll()
    if (databaseUrl) await dropDatabase(databaseUrl).catch(() => {})
  }, 60_000)

  it('nginx balances requests over both instances, and streams pass through it unbuffered', async () => {
    // Each instance counts the /readyz requests it answered (GET /metrics, which is not proxied here).
    const readyCount = async (instance: Instance) => {
      const text = await (await fetch(`${instance.url}/metrics`)).text()
      return Number(/parley_http_requests_total\{method="GET",route="\/readyz",status="200"\} (\d+)/.exec(text)?.[1] ?? 0)
    }
    const before = [await readyCount(a), await readyCount(b)]
    for (let i = 0; i < 6; i++) expect((await fetch(`${lb.url}/readyz`)).status).toBe(200)
    const after = [await readyCount(a), await readyCount(b)]
    // Round robin: both instances answered some, and together all six. nginx takes an instance out for 10 s after
    // an error talking to it: its log says why.
    const served = [after[0]! - before[0]!, after[1]! - before[1]!]
    const tail = (i: Instance) => `${i.name}'s output:\n${(i.output.stdout + i.output.stderr).slice(-3000)}`
    const why = `A and B answered ${served.join(' and ')} of 6; nginx's log:\n${lb.log()}\n${tail(a)}\n${tail(b)}`
    expect(served[0], why).toBeGreaterThan(0)
    expect(served[1], why).toBeGreaterThan(0)
    expect(served[0]! + served[1]!, why).toBe(6)

    // A keep-alive frame arrives through nginx while the stream stays open: nothing is buffered.
    const user = await chat.Client.connect({ apiUrl: bot.url })
    const { conversation } = await user.createConversation({})
    const stream = await listenRaw(bot.url, conversation.id, user.user.key)
    try {
      expect(stream.status).toBe(200)
      const frame = await stream.next(5_000)
      expect(frame.json).toMatchObject({ type: 'ping' })
      expect(stream.isEnded).toBe(false)
    } finally {
      await stream.close()
    }
  })

  it('a message posted through one instance reaches a listener connected to the other (official client)', async () => {
    const viaA = `${a.url}/${bot.webhookId}`
    const viaB = `${b.url}/${bot.webhookId}`
    const alice = await chat.Client.connect({ apiUrl: viaA })
    const { conversation } = await alice.createConversation({})
    const onA = await Talk.open({ url: viaA, encryptionKey: bot.encryptionKey }, { user: alice, conversationId: conversation.id })
    // The same user's key works on B: the key is stored in the shared database.
    const aliceOnB = await chat.Client.connect({ apiUrl: viaB, userKey: alice.user.key })
    const onB = await Talk.open({ url: viaB, encryptionKey: bot.encryptionKey }, { user: aliceOnB, conversationId: conversation.id })
    try {
      const sent = await aliceOnB.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'posted on B' } })
      await onA.until(() => onA.messages.some((m) => m.id === sent.message.id), 'the message on A\'s listener')
      // And the bot (whichever instance ran it) answered once, seen on both listeners.
      await onA.until(() => onA.botTexts().includes('echo: posted on B'), 'the reply on A')
      await onB.until(() => onB.botTexts().includes('echo: posted on B'), 'the reply on B')
      const sentOnA = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'posted on A' } })
      await onB.until(() => onB.messages.some((m) => m.id === sentOnA.message.id), 'the message on B\'s listener')
      await onB.until(() => onB.botTexts().includes('echo: posted on A'), 'the second reply on B')
      expect(onA.messages.filter((m) => m.id === sent.message.id)).toHaveLength(1)
      expect(onB.messages.filter((m) => m.id === sentOnA.message.id)).toHaveLength(1)
    } finally {
      await onA.close()
      await onB.close()
    }
  })

  it('through nginx, the bot answers each user message exactly once and in order', async () => {
    const talk = await Talk.open(bot)
    try {
      const texts = Array.from({ length: 8 }, (_, i) => `hello ${i}`)
      // Sent one after the other through the load balancer: they alternate between instances.
      for (const text of texts) await talk.say(text)
      await talk.botCount(texts.length, 30_000)
      // Nothing more comes later (a second instance running a turn again would add a reply).
      expect(await talk.quiet(1_500)).toEqual([])
      expect(talk.botTexts()).toEqual(texts.map((t) => `echo: ${t}`))
      // In the store: the user's messages in order, one reply each, in order, each after its message
      // (the user did not wait for replies, so messages and replies interleave).
      const stored = (await listAll(talk.user, talk.conversationId)).map(textOf)
      expect(stored.filter((t) => t.startsWith('hello '))).toEqual(texts)
      expect(stored.filter((t) => t.startsWith('echo: '))).toEqual(texts.map((t) => `echo: ${t}`))
      for (const t of texts) expect(stored.indexOf(`echo: ${t}`)).toBeGreaterThan(stored.indexOf(t))
      const ids = (await listAll(talk.user, talk.conversationId)).map((m) => m.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(talk.errors).toEqual([])
    } finally {
      await talk.close()
    }
  }, 60_000)

  it('kill -9 of the instance running a turn: the stream resumes with Last-Event-ID, the survivor takes the lease over, one reply each', async () => {
    const user = await chat.Client.connect({ apiUrl: bot.url })
    const { conversation } = await user.createConversation({})
    const key = user.user.key
    const onA = await chat.Client.connect({ apiUrl: `${a.url}/${bot.webhookId}`, userKey: key })
    const say = (client: chat.AuthenticatedClient, text: string) => client.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })
    // Listening on A directly: A is the instance that dies.
    const first: SseStream = await listenRaw(`${a.url}/${bot.webhookId}`, conversation.id, key)
    let second: SseStream | undefined
    try {
      await say(user, 'before')
      await first.waitUntil(() => messagesOf(first).includes('echo: before'), 30_000)

      // Once the finished turn released the lease, B is frozen, so A is certainly the instance that takes the next turn.
      await eventually(async () => {
        const [row] = await query<{ bot_lease_owner: string | null }>(databaseUrl, 'SELECT bot_lease_owner FROM conversations WHERE id = $1', [conversation.id])
        return row && row.bot_lease_owner === null ? true : undefined
      }, 'the first turn to release its lease')
      b.kill('SIGSTOP')
      const slow = await say(onA, 'slow 4000')
      expect(slow.message.id).toBeTruthy()
      // Mid-turn: A holds the lease and already sent the turn's first reply.
      await first.waitUntil(() => messagesOf(first).includes('working on: slow 4000'), 30_000)
      const [lease] = await query<{ bot_lease_owner: string | null }>(databaseUrl, 'SELECT bot_lease_owner FROM conversations WHERE id = $1', [conversation.id])
      expect(lease?.bot_lease_owner).toEqual(expect.any(String))
      a.kill('SIGKILL')
      await a.exited
      b.kill('SIGCONT')

      // The stream through A ended; the listener reconnects through nginx (to B) with Last-Event-ID.
      await first.waitForEnd(10_000)
      const lastId = [...first.frames].reverse().find((f) => f.id !== undefined)?.id
      expect(lastId).toBeDefined()
      second = await listenRaw(bot.url, conversation.id, key, { 'Last-Event-ID': lastId! })
      expect(second.status).toBe(200)

      // Acknowledged after the crash, through nginx (A refuses connections; nginx uses B).
      await say(user, 'after')
      // B takes the lease over once A's expires (turn timeout + 10 s), re-runs the slow turn, then answers 'after'.
      await second.waitUntil(() => messagesOf(second!).includes('echo: after'), 45_000)

      // 'after' was stored while the dead instance's lease still held the conversation; the re-run
      // turn's first reply kept its id (not repeated), then the turns ran in sequence order.
      const EXPECTED = ['before', 'echo: before', 'slow 4000', 'working on: slow 4000', 'after', 'echo: slow 4000', 'echo: after']
      const seen = [...messagesOf(first), ...messagesOf(second)]
      expect(seen).toEqual(EXPECTED)
      // Frame ids are the conversation's sequence numbers: strictly increasing across the two streams, no gap, no repeat.
      const ids = [...first.frames, ...second.frames].filter((f) => f.id !== undefined && !isPing(f.json)).map((f) => Number(f.id))
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBe(ids[i - 1]! + 1)

      // The store has every message once.
      const stored = await listAll(user, conversation.id)
      expect(stored.map(textOf)).toEqual(EXPECTED)
      const [{ n }] = (await query<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1', [conversation.id])) as [{ n: number }]
      expect(n).toBe(7)
      const [after] = await query<{ bot_lease_owner: string | null }>(databaseUrl, 'SELECT bot_lease_owner FROM conversations WHERE id = $1', [conversation.id])
      expect(after?.bot_lease_owner ?? null).not.toBe(lease!.bot_lease_owner)
    } finally {
      if (b.alive()) b.kill('SIGCONT')
      await first.close()
      await second?.close()
    }
  }, 120_000)
})

function isPing(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { type?: unknown }).type === 'ping'
}

/** Texts of the message_created frames of a raw stream, in arrival order. */
function messagesOf(stream: SseStream): string[] {
  return stream
    .allSignals()
    .filter((s) => s.type === 'message_created')
    .map((s) => textOf(s.data as { payload: Record<string, unknown> }))
}
