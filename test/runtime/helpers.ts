/**
 * Shared helpers for the bot-runtime suites (test/runtime/*.test.ts): bots deployed through the
 * official `@botpress/client` (createBot + updateBot({ id, code })), users talking to them through
 * the official `@botpress/chat` client with a SignalListener on the conversation, and the bot's logs
 * read back with getBotLogs (all pages).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as chat from '@botpress/chat'
import { Client } from '@botpress/client'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import { loadConfig, type Config } from '../../src/config.js'
import { bootstrap, type Credentials } from '../../src/domain/bootstrap.js'
import type { App } from '../../src/http/types.js'
import { dropDatabase, freshDatabase, testStoreKind } from '../helpers/pg.js'
import { ISO_Z } from '../helpers/formats.js'
import { freePort } from '../helpers/ports.js'
import type { Harness } from '../helpers/harness.js'
import { startSdkBot, type SdkBot } from '../helpers/sdk-bot.js'

/**
 * Config for every server of these suites. The official `@botpress/chat` client (0.5.5) under Node
 * ends its SignalListener ('error', then disconnected, no reconnect) after about 4 s without any
 * data on the stream; with a 20 s keep-alive (the default before PARLEY_SSE_KEEPALIVE_MS became 2.5 s) a listener died during any slow turn
 * (measured: keep-alive 1 s and 3 s survive 8 s idle, 20 s dies at ~4.0 s). Keep-alives every
 * second keep the official listener up; Talk also fails fast when its listener reports an error.
 */
/**
 * How long the helpers wait for something the server will do (a reply, a log line). A bound, not a
 * timing check: a passing test waits only as long as it takes, and a loaded machine (CI runs test
 * files in parallel on 2 cores; a hook stopped at its budget restarts a worker) can take seconds.
 */
export const WAIT_MS = 20_000

export const STREAM_CONFIG = { sseKeepAliveMs: 1000 } as const

export { ISO_Z }
export { sleep }
export const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 13)}`

/** What a bot's test needs of a running Parley: the admin base URL and the owner's credentials. */
export interface ParleyLike {
  baseUrl: string
  credentials: Pick<Credentials, 'token' | 'workspaceId'>
}

export function adminClient(p: ParleyLike): Client {
  return new Client({ apiUrl: p.baseUrl, token: p.credentials.token, workspaceId: p.credentials.workspaceId })
}

export interface TestBot {
  id: string
  /** The chat integration's webhook URL: the `apiUrl` of `@botpress/chat`. */
  url: string
  webhookId: string
  encryptionKey: string
}

/** A new bot (with its chat integration) through the official admin client; `code` is deployed with updateBot. */
export async function createBot(p: ParleyLike, code?: string, name = uid('bot')): Promise<TestBot> {
  const admin = adminClient(p)
  const { bot } = await admin.createBot({ name })
  if (code !== undefined) await admin.updateBot({ id: bot.id, code })
  const { bot: full } = await admin.getBot({ id: bot.id })
  const integration = full.integrations.chat!
  return {
    id: bot.id,
    url: integration.webhookUrl,
    webhookId: integration.webhookId,
    encryptionKey: integration.configuration.encryptionKey as string,
  }
}

export async function deploy(p: ParleyLike, botId: string, code: string): Promise<void> {
  await adminClient(p).updateBot({ id: botId, code })
}

export interface BotLog {
  timestamp: string
  level: string
  message: string
  conversationId?: string
}

/** Every log line of a bot, oldest first, following nextToken to the end; also returns the page sizes. */
export async function allLogs(p: ParleyLike, botId: string): Promise<{ logs: BotLog[]; pages: number[] }> {
  const admin = adminClient(p)
  const logs: BotLog[] = []
  const pages: number[] = []
  let nextToken: string | undefined
  do {
    const page = await admin.getBotLogs({ id: botId, timeStart: '2000-01-01T00:00:00.000Z', ...(nextToken !== undefined && { nextToken }) })
    logs.push(...page.logs)
    pages.push(page.logs.length)
    nextToken = page.nextToken
  } while (nextToken)
  return { logs, pages }
}

/** Polls getBotLogs until a line satisfies `predicate`; rejects after `timeoutMs` with the logs seen. */
export async function waitForLog(p: ParleyLike, botId: string, predicate: (log: BotLog) => boolean, timeoutMs = WAIT_MS): Promise<BotLog> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { logs } = await allLogs(p, botId)
    const hit = logs.find(predicate)
    if (hit) return hit
    if (Date.now() > deadline) throw new Error(`no matching log line within ${timeoutMs} ms; logs: ${JSON.stringify(logs.slice(-20), null, 1)}`)
    await sleep(50)
  }
}

export type MessageSignal = chat.Signals['message_created']
export type EventSignal = chat.Signals['event_created']

/**
 * One user in one conversation of a bot, with a SignalListener recording every message_created and
 * event_created signal (with the time it arrived).
 */
export class Talk {
  readonly messages: Array<MessageSignal & { receivedAt: number }> = []
  readonly events: Array<EventSignal & { receivedAt: number }> = []
  /** Frames the official listener could not parse as any known signal (it emits them as 'unknown'). */
  readonly unknown: Array<{ data: unknown; at: number }> = []
  /** Errors the listener reported (it disconnects on an error). */
  readonly errors: Array<{ error: Error; at: number }> = []
  private waiters: Array<() => void> = []

  private constructor(
    readonly user: chat.AuthenticatedClient,
    readonly conversationId: string,
    readonly listener: chat.SignalListener,
  ) {
    listener.on('message_created', (m) => {
      if (this.messages.some((seen) => seen.id === m.id)) return
      this.messages.push({ ...m, receivedAt: Date.now() })
      this.wake()
    })
    listener.on('event_created', (e) => {
      this.events.push({ ...e, receivedAt: Date.now() })
      this.wake()
    })
    listener.on('unknown', (data) => {
      if (typeof data === 'string' && data.startsWith('{"type":"ping"')) return // the server's keep-alive frames
      this.unknown.push({ data, at: Date.now() })
      this.wake()
    })
    listener.on('error', (error) => {
      this.errors.push({ error, at: Date.now() })
      this.wake()
    })
  }

  /**
   * Connects a user (a JWT user when `userId` is given, else a server-created user) and opens a conversation.
   * A new conversation's messages sent before the listener was up (the bot's greeting, sent when the
   * conversation is created) are read once it is, so `messages` holds them too (`history` says whether to read
   * them; by default only for a conversation it creates).
   */
  static async open(
    bot: Pick<TestBot, 'url' | 'encryptionKey'>,
    options: { userId?: string; conversationId?: string; user?: chat.AuthenticatedClient; history?: boolean } = {},
  ): Promise<Talk> {
    const user =
      options.user ??
      (options.userId !== undefined
        ? await chat.Client.connect({ apiUrl: bot.url, encryptionKey: bot.encryptionKey, userId: options.userId })
        : await chat.Client.connect({ apiUrl: bot.url }))
    const { conversation } =
      options.conversationId !== undefined
        ? await user.getOrCreateConversation({ id: options.conversationId })
        : await user.createConversation({})
    const listener = await user.listenConversation({ id: conversation.id })
    const talk = new Talk(user, conversation.id, listener)
    if (options.history ?? options.conversationId === undefined) {
      // Older than anything the listener received (it was up before the history was read).
      const before = (await listAll(user, conversation.id)).filter((m) => !talk.messages.some((seen) => seen.id === m.id))
      talk.messages.unshift(...before.map((m) => ({ ...m, isBot: m.userId !== user.user.id, receivedAt: Date.now() }) as unknown as MessageSignal & { receivedAt: number }))
      if (before.length > 0) talk.wake()
    }
    return talk
  }

  private wake(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }

  async say(text: string): Promise<chat.Message> {
    return (await this.user.createMessage({ conversationId: this.conversationId, payload: { type: 'text', text } })).message
  }

  async send(payload: chat.AuthenticatedClientRequests['createMessage']['payload']): Promise<chat.Message> {
    return (await this.user.createMessage({ conversationId: this.conversationId, payload })).message
  }

  async event(payload: Record<string, unknown>): Promise<chat.Event> {
    return (await this.user.createEvent({ conversationId: this.conversationId, payload })).event
  }

  /** The bot's messages received so far. */
  botMessages(): Array<MessageSignal & { receivedAt: number }> {
    return this.messages.filter((m) => m.isBot)
  }

  /** Texts (or previews of non-text payloads: their type in brackets) of the bot's messages received so far. */
  botTexts(): string[] {
    return this.botMessages().map(textOf)
  }

  /** Resolves when `predicate` holds (re-checked on every signal); rejects after `timeoutMs`. */
  async until(predicate: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (this.errors.length > 0) {
        throw new Error(`the conversation's listener failed while waiting for ${what}: ${this.errors.map((e) => e.error.message || 'error').join('; ')}`)
      }
      const left = deadline - Date.now()
      if (left <= 0) {
        const unknown = this.unknown.length > 0 ? `; the official listener could not parse ${this.unknown.length} frame(s): ${JSON.stringify(this.unknown.map((u) => u.data)).slice(0, 600)}` : ''
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; bot said: ${JSON.stringify(this.botTexts().slice(-10))}${unknown}`)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200))
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /** Waits until the bot has sent `count` messages in total; returns them all. */
  async botCount(count: number, timeoutMs = WAIT_MS): Promise<Array<MessageSignal & { receivedAt: number }>> {
    await this.until(() => this.botMessages().length >= count, `${count} bot message(s)`, timeoutMs)
    return this.botMessages()
  }

  /** Sends `text` and waits for the bot's next `count` messages (those after the ones already received). */
  async ask(text: string, count = 1, timeoutMs = WAIT_MS): Promise<Array<MessageSignal & { receivedAt: number }>> {
    const before = this.botMessages().length
    await this.say(text)
    return (await this.botCount(before + count, timeoutMs)).slice(before)
  }

  /** Like `ask` but returns the texts. */
  async askText(text: string, count = 1, timeoutMs = WAIT_MS): Promise<string[]> {
    return (await this.ask(text, count, timeoutMs)).map(textOf)
  }

  /** Asserts nothing more comes from the bot for `ms` (returns what arrived, to be checked by the caller). */
  async quiet(ms: number): Promise<Array<MessageSignal & { receivedAt: number }>> {
    const before = this.botMessages().length
    await sleep(ms)
    return this.botMessages().slice(before)
  }

  async close(): Promise<void> {
    await this.listener.disconnect().catch(() => {})
    this.listener.cleanup()
  }
}

/** A frame of a conversation's listener: a signal's type and data. */
export interface Frame { type: string; data: Record<string, any> }

/**
 * Every frame the talk's listener gets from now on, in arrival order: the messages and the signals the official
 * client does not know (Botpress's newer `message_stream_*`, which it emits as `unknown`), keep-alive pings left out.
 */
export function timeline(talk: Talk): Frame[] {
  const frames: Frame[] = []
  talk.listener.on('unknown', (raw) => {
    const frame = typeof raw === 'string' ? (JSON.parse(raw) as Frame) : undefined
    if (frame && frame.type !== 'ping') frames.push(frame)
  })
  talk.listener.on('message_created', (m) => frames.push({ type: 'message_created', data: m as unknown as Record<string, any> }))
  return frames
}

/** A message's text for text messages, else `[type]`. */
export function textOf(m: { payload: Record<string, unknown> }): string {
  const p = m.payload as { type?: string; text?: unknown }
  return p.type === 'text' && typeof p.text === 'string' ? p.text : `[${String(p.type)}]`
}

/** Every message of a conversation, all pages, oldest first (listMessages pages go newest first). */
export async function listAll(user: chat.AuthenticatedClient, conversationId: string): Promise<chat.Message[]> {
  const out: chat.Message[] = []
  let nextToken: string | undefined
  do {
    const page = await user.listMessages({ conversationId, ...(nextToken !== undefined && { nextToken }) })
    out.push(...page.messages)
    nextToken = page.meta.nextToken
  } while (nextToken)
  return out.reverse()
}

// ---------------------------------------------------------------- a Parley that can be restarted

export interface Restartable extends ParleyLike {
  app: App
  credentials: Credentials
  /** Stops the server and closes the store, keeping the data. */
  stop(): Promise<void>
}

/** Where a restartable Parley keeps its data: a directory (SQLite file, credentials.json) and, on PostgreSQL, a database. */
export interface DataPlace {
  dataDir: string
  databaseUrl: string | undefined
  /** Removes the directory and drops the database (after the last stop). */
  remove(): Promise<void>
}

/**
 * How many blobs (file content, webhook bodies) the blob store `startOn` uses holds: rows of the
 * `blobs` table on PostgreSQL, files under `${dataDir}/blobs` (temporary files of puts in progress
 * left out) on the local disk. The test's view of what is stored.
 */
export async function storedBlobCount(place: Pick<DataPlace, 'dataDir' | 'databaseUrl'>, blobStore: 'local' | 'postgres' = place.databaseUrl ? 'postgres' : 'local'): Promise<number> {
  if (blobStore === 'postgres') {
    const client = new pg.Client({ connectionString: place.databaseUrl })
    await client.connect()
    try {
      return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM blobs')).rows[0]!.n)
    } finally {
      await client.end().catch(() => {})
    }
  }
  try {
    return readdirSync(join(place.dataDir, 'blobs'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.endsWith('.part')).length
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw err
  }
}

/** A fresh data place on the store the run tests (PARLEY_TEST_STORE). */
export async function newDataPlace(): Promise<DataPlace> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-runtime-'))
  const databaseUrl = testStoreKind() === 'postgres' ? await freshDatabase() : undefined
  return {
    dataDir,
    databaseUrl,
    async remove() {
      if (databaseUrl) await dropDatabase(databaseUrl)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Parley on data that survives a stop (test/helpers/harness.ts deletes its data on close):
 * bootstrapped like `npm start` on the first start, reused as is on the next ones.
 */
export async function startOn(place: DataPlace, overrides: Partial<Config> = {}): Promise<Restartable> {
  const port = await freePort()
  // As `npm start` with PARLEY_DATABASE_URL: blobs (file content, webhook bodies) in the database too.
  const env = { PARLEY_DATA_DIR: place.dataDir, PORT: String(port), ...(place.databaseUrl && { PARLEY_DATABASE_URL: place.databaseUrl }) }
  const config = loadConfig(env, { databasePoolSize: 5, ...STREAM_CONFIG, ...overrides })
  const adapters = await createAdapters(config)
  const { store } = adapters
  const app = await buildApp({ config, ...adapters, logger: false })
  await app.listen({ port, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${port}`
  const boot = await bootstrap(store, place.dataDir, baseUrl, { demoCode: false })
  return {
    app,
    baseUrl,
    credentials: boot.credentials!,
    async stop() {
      await app.close()
      await closeAdapters(adapters)
    },
  }
}

/** The chat URL of a bot on a (re)started server: the webhook id is stable, the port is not. */
export const chatUrl = (p: ParleyLike, bot: Pick<TestBot, 'webhookId'>) => `${p.baseUrl}/${bot.webhookId}`

/** Parses the JSON a bot sent back as a text message (`prefix` then JSON). */
export function jsonAfter<T = any>(text: string, prefix: string): T {
  if (!text.startsWith(prefix)) throw new Error(`expected a message starting with ${JSON.stringify(prefix)}, got ${JSON.stringify(text.slice(0, 200))}`)
  return JSON.parse(text.slice(prefix.length)) as T
}

/** getBotQualityAnalytics from `startDate` to today, summed: failed and timed-out turns (deliveries included). */
export async function qualityTotals(p: ParleyLike, botId: string, startDate: string): Promise<{ failedTurns: number; timedOutTurns: number }> {
  const res = await fetch(`${p.baseUrl}/v1/admin/bots/${botId}/analytics/quality?startDate=${startDate}&endDate=${new Date().toISOString().slice(0, 10)}`,
    { headers: { authorization: `Bearer ${p.credentials.token}`, 'x-workspace-id': p.credentials.workspaceId } })
  const records = (await res.json() as { records: { failedTurns: number; timedOutTurns: number }[] }).records
  return { failedTurns: records.reduce((n, r) => n + r.failedTurns, 0), timedOutTurns: records.reduce((n, r) => n + r.timedOutTurns, 0) }
}
