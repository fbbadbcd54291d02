/**
 * Issue #5, faults: PostgreSQL goes away under two running instances and comes back. While it is
 * down, API requests answer 503 ServiceUnavailable in the Botpress error body without hanging,
 * /readyz says not ready and /healthz stays up; when it returns, the same processes serve again
 * (no restart), LISTEN/NOTIFY reconnects (streams and the bot runtime hear new messages), and
 * every message acknowledged before the outage is there.
 *
 * This suite stops PostgreSQL, so it runs on a cluster of its own, never on the run's shared one.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from '../cli/helpers.js'
import { listenRaw, type SseStream } from '../e2e/sse-reader.js'
import { expectErrorBody, raw } from '../e2e/helpers.js'
import { createDatabase, findPostgresBinaries, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { createBot, listAll, textOf, type TestBot } from '../runtime/helpers.js'
import { eventually, freePort, sleep, pgCtl, Processes, readCredentials, type Instance } from './helpers.js'

const ECHO_BOT = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ conversationId: event.conversationId, payload: { type: 'text', text: 'echo: ' + event.payload.text } })
  },
}
`


// Needs Debian's server binaries for a cluster of its own (skipped on an external PARLEY_TEST_DATABASE_URL without them).
describe.skipIf(!findPostgresBinaries() && process.env.PARLEY_REQUIRE_POSTGRES !== '1')('PostgreSQL down and back under running instances', () => {
  const procs = new Processes()
  let cluster: PgCluster | undefined
  let a: Instance
  let b: Instance
  let bot: TestBot
  let user: chat.AuthenticatedClient
  let conversationId: string
  let dataDir: string

  beforeAll(async () => {
    await ensureBuilt()
    cluster = await startPgCluster()
    const databaseUrl = await createDatabase(cluster.url)
    const [portA, portB] = [await freePort(), await freePort()]
    dataDir = procs.tempDir('parley-outage-')
    ;[a, b] = await Promise.all([
      procs.start('A', { port: portA, databaseUrl, dataDir, publicUrl: `http://127.0.0.1:${portA}` }).started,
      procs.start('B', { port: portB, databaseUrl, dataDir, publicUrl: `http://127.0.0.1:${portA}` }).started,
    ])
    bot = await createBot({ baseUrl: a.url, credentials: readCredentials(dataDir) }, ECHO_BOT)
    user = await chat.Client.connect({ apiUrl: bot.url })
    conversationId = (await user.createConversation({})).conversation.id
  }, 240_000)

  afterAll(async () => {
    await procs.stopAll()
    await cluster?.stop().catch(() => {}) // removes its files even when the server is already down
  }, 90_000)

  it('answers 503 while PostgreSQL is down, and recovers by itself when it returns', async () => {
    const viaB = `${b.url}/${bot.webhookId}`
    let live: SseStream | undefined
    let fresh: SseStream | undefined
    let fresh2: SseStream | undefined
    try {
      // Before: acknowledged messages, answered by the bot.
      // The stream opens first: one opened after the writes would get the user's own writes (the replay window) but
      // not the bot's replies stored before it connected (docs/chat-api.md), and the order check below needs all of them.
      live = await listenRaw(viaB, conversationId, user.user.key)
      const acknowledged: string[] = []
      for (const text of ['one', 'two', 'three']) acknowledged.push((await user.createMessage({ conversationId, payload: { type: 'text', text } })).message.id)
      await eventually(async () => ((await listAll(user, conversationId)).filter((m) => textOf(m).startsWith('echo: ')).length === 3 ? true : undefined), 'three replies')

      // A clean shutdown first (sessions terminated by the server), briefly.
      await pgCtl(cluster!, 'stop-fast')
      expectErrorBody(await raw(b.url, 'GET', '/readyz'), 503, 'ServiceUnavailable')
      expectErrorBody(await raw(viaB, 'POST', '/messages', { key: user.user.key, body: { conversationId, payload: { type: 'text', text: 'lost?' } } }), 503, 'ServiceUnavailable')
      await pgCtl(cluster!, 'start')
      await eventually(async () => ((await fetch(`${b.url}/readyz`)).status === 200 ? true : undefined), 'B ready after the fast stop', 30_000, 250)
      acknowledged.push((await user.createMessage({ conversationId, payload: { type: 'text', text: 'between' } })).message.id)

      // Then a crash of the server (no goodbye to the sessions), for longer.
      await pgCtl(cluster!, 'stop-immediate')

      for (const instance of [a, b]) {
        const health = await fetch(`${instance.url}/healthz`, { signal: AbortSignal.timeout(15_000) })
        expect(health.status).toBe(200)
        const ready = await raw(instance.url, 'GET', '/readyz')
        expectErrorBody(ready, 503, 'ServiceUnavailable')
        // Chat API on both instances: a write and a read, each a 503 in the error body, never a 500 or a hang.
        const write = await raw(`${instance.url}/${bot.webhookId}`, 'POST', '/messages', { key: user.user.key, body: { conversationId, payload: { type: 'text', text: 'lost?' } } })
        expectErrorBody(write, 503, 'ServiceUnavailable')
        expect(write.headers.get('retry-after')).toBe('2')
        const read = await raw(`${instance.url}/${bot.webhookId}`, 'GET', `/conversations/${conversationId}/messages`, { key: user.user.key })
        expectErrorBody(read, 503, 'ServiceUnavailable')
        const stream = await raw(`${instance.url}/${bot.webhookId}`, 'GET', `/conversations/${conversationId}/listen`, { key: user.user.key })
        expectErrorBody(stream, 503, 'ServiceUnavailable')
      }
      // Down long enough for several failed LISTEN reconnects and a failed sweep of the runtime.
      await sleep(4_000)
      // Admin API too.
      const credentials = readCredentials(dataDir)
      const admin = await raw(a.url, 'GET', '/v1/admin/bots', { headers: { authorization: `Bearer ${credentials.token}`, 'x-workspace-id': credentials.workspaceId } })
      expectErrorBody(admin, 503, 'ServiceUnavailable')

      await pgCtl(cluster!, 'start')

      // The same processes serve again, without a restart.
      for (const instance of [a, b]) {
        await eventually(async () => ((await fetch(`${instance.url}/readyz`)).status === 200 ? true : undefined), `${instance.name} ready again`, 30_000, 250)
      }
      expect(a.alive() && b.alive()).toBe(true)

      // A new stream on B, and the bot (whichever instance runs it), hear a message posted through A:
      // LISTEN/NOTIFY reconnected on both instances.
      fresh = await listenRaw(viaB, conversationId, user.user.key)
      expect(fresh.status).toBe(200)
      const after = await eventually(
        async () => (await user.createMessage({ conversationId, payload: { type: 'text', text: 'after the outage' } })).message,
        'a message accepted after the outage',
        30_000,
        250,
      )
      await fresh.waitUntil(() => fresh!.allSignals().some((s) => s.type === 'message_created' && (s.data as { id: string }).id === after.id), 20_000)
      await fresh.waitUntil(() => fresh!.allSignals().some((s) => s.type === 'message_created' && textOf(s.data as { payload: Record<string, unknown> }) === 'echo: after the outage'), 30_000)

      // The stream opened before the outage: it either stayed open (keep-alives need no database)
      // or ended, and then a reconnect with its Last-Event-ID resumes it. Either way, every message
      // stored since it opened arrives, once, in order.
      let resumed: SseStream | undefined
      if (live.isEnded) {
        const lastId = [...live.frames].reverse().find((f) => f.id !== undefined)?.id
        expect(lastId).toBeDefined()
        resumed = await listenRaw(viaB, conversationId, user.user.key, { 'Last-Event-ID': lastId! })
        fresh2 = resumed
      }
      const following = resumed ?? live
      await following.waitUntil(() => following.allSignals().some((s) => s.type === 'message_created' && (s.data as { id: string }).id === after.id), 20_000)
      const seenIds = [...live.allSignals(), ...(resumed?.allSignals() ?? [])].filter((s) => s.type === 'message_created').map((s) => (s.data as { id: string }).id)
      const storedIds = (await listAll(user, conversationId)).map((m) => m.id)
      // Every message of the conversation (it is new: the stream was open before its first), in order, none twice.
      expect(seenIds).toEqual(storedIds.slice(0, seenIds.length))
      expect(seenIds).toContain(after.id)

      // Nothing acknowledged was lost; nothing refused was stored; one reply per message.
      const stored = await listAll(user, conversationId)
      const texts = stored.map(textOf)
      for (const id of acknowledged) expect(stored.some((m) => m.id === id)).toBe(true)
      expect(texts).not.toContain('lost?')
      expect(texts.filter((t) => t === 'echo: after the outage')).toHaveLength(1)
      expect(texts.filter((t) => t.startsWith('echo: '))).toEqual(['echo: one', 'echo: two', 'echo: three', 'echo: between', 'echo: after the outage'])
    } catch (err) {
      // What the instances said (a crash shows here).
      for (const i of [a, b]) process.stderr.write(`--- ${i.name} (alive: ${i.alive()}) stderr:\n${i.output.stderr.slice(-3000)}\n`)
      throw err
    } finally {
      await live?.close()
      await fresh?.close()
      await fresh2?.close()
    }
  }, 180_000)

  it('answers 503 within the pool timeouts while PostgreSQL does not answer at all (frozen), then recovers', async () => {
    // SIGSTOP on the postmaster and every backend: connections are accepted by the kernel, nothing answers.
    const pids = await postgresPids(cluster!)
    expect(pids.length).toBeGreaterThan(1)
    let frozen = true
    for (const pid of pids) process.kill(pid, 'SIGSTOP')
    try {
      const chatOn = (instance: Instance) => `${instance.url}/${bot.webhookId}`
      const headers = { 'x-user-key': user.user.key, 'content-type': 'application/json' }
      // All at once, each bounded: a hang fails here instead of timing the test out.
      const [readyA, readyB, read, write, healthA] = await Promise.all([
        boundedFetch(`${a.url}/readyz`),
        boundedFetch(`${b.url}/readyz`),
        boundedFetch(`${chatOn(a)}/conversations/${conversationId}/messages`, { headers }),
        boundedFetch(`${chatOn(b)}/messages`, { method: 'POST', headers, body: JSON.stringify({ conversationId, payload: { type: 'text', text: 'frozen?' } }) }),
        boundedFetch(`${a.url}/healthz`),
      ])
      expect(healthA.status).toBe(200)
      for (const res of [readyA, readyB, read, write]) {
        expect(res.status, JSON.stringify(res.body)).toBe(503)
        expect(res.body).toMatchObject({ code: 503, type: 'ServiceUnavailable' })
      }
      for (const pid of pids) process.kill(pid, 'SIGCONT')
      frozen = false

      for (const instance of [a, b]) {
        await eventually(async () => ((await fetch(`${instance.url}/readyz`)).status === 200 ? true : undefined), `${instance.name} ready after the freeze`, 30_000, 250)
      }
      // The bot still answers, once.
      await user.createMessage({ conversationId, payload: { type: 'text', text: 'thawed' } })
      await eventually(async () => ((await listAll(user, conversationId)).some((m) => textOf(m) === 'echo: thawed') ? true : undefined), 'the reply after the freeze', 30_000, 250)
      expect((await listAll(user, conversationId)).filter((m) => textOf(m) === 'echo: thawed')).toHaveLength(1)
      expect(a.alive() && b.alive()).toBe(true)
    } finally {
      if (frozen) for (const pid of pids) process.kill(pid, 'SIGCONT')
    }
  }, 120_000)
})

/** The postmaster of a cluster made by startPgCluster, and its children (backends, background workers). */
async function postgresPids(cluster: PgCluster): Promise<number[]> {
  const postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  const { stdout } = await promisify(execFile)('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }))
  return [postmaster, ...stdout.split('\n').filter(Boolean).map(Number)]
}

/** fetch with an upper bound (the pool's 5 s connect and 15 s query timeouts, plus slack for a loaded machine). */
async function boundedFetch(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(40_000) })
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, body }
}
