/**
 * Unchanged @botpress/sdk integrations (test/fixtures/sdk-integrations/): their definition turned into
 * the body of createIntegration (what the Botpress CLI's `bp deploy` sends: zod schemas as JSON
 * schemas), and a small outside chat service for them to bridge.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { adminClient, createBot, type TestBot } from '../runtime/helpers.js'
import type { Harness } from './harness.js'
import { startSdkBot, type SdkBot } from './sdk-bot.js'

type Zod = { toJSONSchema(): Record<string, unknown> }
const schemaOf = (z: unknown) => (z as Zod).toJSONSchema()
const mapValues = <T, U>(o: Record<string, T> | undefined, f: (v: T) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, v]) => [k, f(v)]))

/** createIntegration's body for an IntegrationDefinition of @botpress/sdk (url added by the caller). */
export function definitionBody(def: any): Record<string, unknown> {
  return {
    name: def.name,
    version: def.version,
    title: def.title,
    description: def.description,
    ...(def.configuration && { configuration: { ...def.configuration, schema: def.configuration.schema ? schemaOf(def.configuration.schema) : undefined } }),
    channels: mapValues(def.channels, (c: any) => ({ ...c, messages: mapValues(c.messages, (m: any) => ({ schema: schemaOf(m.schema) })) })),
    actions: mapValues(def.actions, (a: any) => ({ ...a, input: { schema: schemaOf(a.input.schema) }, output: { schema: schemaOf(a.output.schema) } })),
    events: mapValues(def.events, (e: any) => ({ ...e, schema: schemaOf(e.schema) })),
    states: mapValues(def.states, (st: any) => ({ ...st, schema: schemaOf(st.schema) })),
    ...(def.user && { user: def.user }),
    secrets: mapValues(def.secrets, () => null),
  }
}

/** An outside chat service: the integration registers with it and sends the bot's messages to it. */
export interface OutsideChat {
  url: string
  registrations: { webhookUrl: string; botId: string; alias: string }[]
  unregistrations: { webhookUrl: string; botId: string }[]
  sent: { id: number; chatId: string; text: string }[]
  /** Resolves once `predicate` holds for what was sent (checked on each arrival). */
  waitFor<T>(predicate: () => T | undefined | false, what: string, timeoutMs?: number): Promise<T>
  /** Answers 503 to /send while down (an outage of the outside service). */
  down: boolean
  /** /send requests answered 503 so far. */
  refused: number
  close(): Promise<void>
}

export async function startOutsideChat(): Promise<OutsideChat> {
  const waiters: (() => void)[] = []
  const wake = () => waiters.splice(0).forEach((w) => w())
  let nextId = 1000
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : {}
      const reply = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
      if (req.url === '/register') { outside.registrations.push(body); wake(); return reply(200, {}) }
      if (req.url === '/unregister') { outside.unregistrations.push(body); wake(); return reply(200, {}) }
      if (req.url === '/send') {
        if (outside.down) {
          outside.refused++
          wake()
          return reply(503, { error: 'down' })
        }
        const id = nextId++
        outside.sent.push({ id, chatId: body.chatId, text: body.text })
        wake()
        return reply(200, { id })
      }
      reply(404, {})
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const outside: OutsideChat = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    registrations: [], unregistrations: [], sent: [], down: false, refused: 0,
    async waitFor(predicate, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const value = predicate()
        if (value) return value
        if (Date.now() > deadline) throw new Error(`outside chat service: no ${what} within ${timeoutMs} ms (sent: ${JSON.stringify(outside.sent)})`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  return outside
}

/** An unchanged @botpress/sdk integration as a child process, registered with Parley and installed on a new bot. */
export interface HostedSdkIntegration {
  integrationId: string
  /** The integration's own API key (what its process authenticates with). */
  integrationKey: string
  program: SdkBot
  bot: TestBot
  /** The installation's webhookUrl (the outside service posts there). */
  webhookUrl: string
}

/**
 * What `bp deploy` and an admin would do, in order: createIntegration from `definition` (with `secrets`), an API key
 * for it, its process started (`script`, relative to startSdkBot's folder) and its url set, a bot created with `code`
 * and the integration installed on it under `alias` with `installation` (configuration, disabledChannels…).
 */
export async function hostSdkIntegration(h: Harness, options: {
  definition: unknown
  script: string
  alias: string
  code: string
  installation: Record<string, unknown>
  secrets?: Record<string, string>
  env?: Record<string, string>
}): Promise<HostedSdkIntegration> {
  const admin = adminClient(h)
  const { integration } = await admin.createIntegration({ ...definitionBody(options.definition), ...(options.secrets && { secrets: options.secrets }) } as never)
  const integrationKey = (await admin.createIntegrationApiKey({ integrationId: integration.id, note: options.alias })).value
  const program = await startSdkBot(options.script, { apiUrl: h.baseUrl, token: integrationKey, botId: '', ...(options.env && { env: options.env }) })
  await admin.updateIntegration({ id: integration.id, url: program.url } as never)
  const bot = await createBot(h, options.code)
  await admin.updateBot({ id: bot.id, integrations: { [options.alias]: { integrationId: integration.id, enabled: true, ...options.installation } } } as never)
  const webhookUrl = (await admin.getBot({ id: bot.id })).bot.integrations[options.alias]!.webhookUrl
  return { integrationId: integration.id, integrationKey, program, bot, webhookUrl }
}
