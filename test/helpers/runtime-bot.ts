/**
 * A bot driven through the Runtime API with the official @botpress/client@1.45.0: created with the
 * admin client (optionally with code and state declarations), a bot API key from createBotApiKey,
 * and `new Client({ apiUrl, token, botId })` as a Botpress bot (or a program acting as one) holds it.
 * `converse` makes a chat user and a conversation through @botpress/chat, for states and events
 * that hang on them.
 */
import { randomUUID } from 'node:crypto'
import * as chat from '@botpress/chat'
import { Client } from '@botpress/client'
import { allLogs } from '../runtime/helpers.js'

export interface RuntimeParley {
  baseUrl: string
  credentials: { token: string; workspaceId: string }
}

export interface RuntimeBot {
  id: string
  /** The Runtime API as the bot (its bot API key). */
  client: Client
  /** The workspace owner's admin client. */
  admin: Client
  /** The bot's chat integration (for @botpress/chat users). */
  chat: { url: string; webhookId: string; encryptionKey: string; integrationId: string }
  apiKey: string
  /** A chat user and a conversation of this bot. */
  converse(): Promise<{ user: chat.AuthenticatedClient; userId: string; conversationId: string }>
}

export async function runtimeBot(p: RuntimeParley, definition: { code?: string; states?: Record<string, unknown> } = {}): Promise<RuntimeBot> {
  const admin = new Client({ apiUrl: p.baseUrl, token: p.credentials.token, workspaceId: p.credentials.workspaceId })
  const { bot } = await admin.createBot({ name: `rt-${randomUUID().slice(0, 8)}`, ...(definition.states && { states: definition.states as never }) })
  if (definition.code !== undefined) await admin.updateBot({ id: bot.id, code: definition.code })
  const { bot: full } = await admin.getBot({ id: bot.id })
  const integration = full.integrations.chat!
  const key = await admin.createBotApiKey({ botId: bot.id, note: 'runtime test' })
  const client = new Client({ apiUrl: p.baseUrl, token: key.value, botId: bot.id })
  const chatInfo = { url: integration.webhookUrl, webhookId: integration.webhookId, encryptionKey: integration.configuration.encryptionKey as string, integrationId: integration.id }
  return {
    id: bot.id,
    client,
    admin,
    chat: chatInfo,
    apiKey: key.value,
    async converse() {
      const user = await chat.Client.connect({ apiUrl: chatInfo.url })
      const { conversation } = await user.createConversation({})
      return { user, userId: user.user.id, conversationId: conversation.id }
    },
  }
}

/** Polls `probe` until it returns something other than undefined; rejects after `timeoutMs` with `what`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** Logs every incoming event; answers custom events asking for a reply in their conversation. */
export const EVENT_BOT = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    console.log('GOT ' + JSON.stringify({ id: event.id, type: event.type, payload: event.payload, conversationId: event.conversationId ?? null, userId: event.userId ?? null }))
    if (event.type === 'custom' && event.payload.reply) await client.createMessage({ payload: { type: 'text', text: 'got ' + event.payload.reply } })
  },
}
`

export interface Got { id: string; type: string; payload: Record<string, any>; conversationId: string | null; userId: string | null }

/** The bot's "GOT" log lines (one per event its hooks saw), parsed. */
export async function gotEvents(p: { baseUrl: string; credentials: { token: string; workspaceId: string } }, botId: string): Promise<Got[]> {
  const { logs } = await allLogs(p, botId)
  return logs.filter((l) => l.message.startsWith('GOT ')).map((l) => JSON.parse(l.message.slice(4)) as Got)
}
