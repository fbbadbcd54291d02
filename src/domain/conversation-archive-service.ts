import { errors } from '../lib/errors.js'
import type { ArchiveConversation, ArchiveFilter } from '../store/conversation-archive-store.js'
import type { BotLogRow, IntegrationRow, MessageRow, Page, Store, UserRow } from '../store/store.js'
import type { BotService } from './bot-service.js'

/** What the console's list and export queries accept (dates as ISO 8601 strings). */
export interface ArchiveQuery {
  q?: string | undefined
  from?: string | undefined
  to?: string | undefined
  failed?: boolean | undefined
  handoff?: boolean | undefined
  conversationId?: string | undefined
}

export const ARCHIVE_LIMITS = { pageSize: 50, transcriptMessages: 1000, exportPage: 500, maxQuery: 200 }

function time(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined
  const ms = value.length <= 64 ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(ms)) throw errors.invalidQuery(`${name} must be an ISO 8601 date or date-time, got ${JSON.stringify(value.slice(0, 64))}`)
  return ms
}

const storable = (s: string) => !s.includes('\u0000') && s.isWellFormed()

export interface Transcript {
  conversation: ArchiveConversation
  messages: MessageRow[]
  /** More messages than the transcript holds (it shows the first ARCHIVE_LIMITS.transcriptMessages). */
  truncated: boolean
  users: UserRow[]
  logs: BotLogRow[]
}

/** One exported message, as a JSON line and a CSV row. */
export interface ExportRow {
  conversationId: string
  messageId: string
  seq: number
  createdAt: string
  userId: string
  direction: 'incoming' | 'outgoing'
  type: string
  text: string
  payload: string
}
export const EXPORT_COLUMNS: (keyof ExportRow)[] = ['conversationId', 'messageId', 'seq', 'createdAt', 'userId', 'direction', 'type', 'text', 'payload']

/** A CSV field (RFC 4180), with a leading =, +, - or @ neutralised so a spreadsheet does not run it as a formula. */
export function csvField(value: string | number): string {
  let s = String(value)
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/**
 * The console's conversations: search a bot's conversations, read one with its users and the bot's logs, export
 * them page by page (store.conversationArchive). Another workspace's bot, an unknown conversation: 404.
 */
export class ConversationArchiveService {
  constructor(private readonly store: Store, private readonly bots: BotService) {}

  private async chatOf(workspaceId: string, botId: string): Promise<{ botId: string; chat: IntegrationRow | undefined }> {
    const { bot, integrations } = await this.bots.getBot(workspaceId, botId)
    return { botId: bot.id, chat: integrations.find((i) => i.name === 'chat') }
  }

  private filter(botId: string, chat: IntegrationRow, query: ArchiveQuery): ArchiveFilter {
    const q = query.q?.trim()
    if (q !== undefined && (q.length > ARCHIVE_LIMITS.maxQuery || !storable(q))) throw errors.invalidQuery(`q must be at most ${ARCHIVE_LIMITS.maxQuery} characters of text`)
    if (query.conversationId !== undefined && (query.conversationId.length > 200 || !storable(query.conversationId))) throw errors.invalidQuery('conversationId is not a conversation id')
    return {
      integrationId: chat.id, botId, q: q || undefined, from: time('from', query.from), to: time('to', query.to),
      failed: query.failed, handoff: query.handoff, conversationId: query.conversationId,
    }
  }

  async search(workspaceId: string, botId: string, query: ArchiveQuery, nextToken: string | undefined): Promise<Page<ArchiveConversation>> {
    const { botId: id, chat } = await this.chatOf(workspaceId, botId)
    const f = chat && this.filter(id, chat, query)
    if (!f) return { items: [], next: undefined }
    return this.store.conversationArchive.searchConversations(f, { after: nextToken, limit: ARCHIVE_LIMITS.pageSize })
  }

  async transcript(workspaceId: string, botId: string, conversationId: string): Promise<Transcript> {
    const { botId: id, chat } = await this.chatOf(workspaceId, botId)
    if (!chat || conversationId.length > 200 || !storable(conversationId)) throw errors.notFound('Conversation', conversationId)
    const found = await this.store.conversationArchive.searchConversations({ integrationId: chat.id, botId: id, conversationId }, { limit: 1 })
    const conversation = found.items[0]
    if (!conversation) throw errors.notFound('Conversation', conversationId)
    const page = await this.store.conversationArchive.exportMessages(
      { integrationId: chat.id, botId: id, conversationId }, { limit: ARCHIVE_LIMITS.transcriptMessages })
    const userIds = [...new Set([...(conversation.ownerId ? [conversation.ownerId] : []), ...page.items.map((m) => m.userId)])]
    const users = (await this.store.botChat.getUsers(chat.id, userIds)).map(({ tags: _t, properties: _p, attributes: _a, ...u }) => u)
    const logs: BotLogRow[] = []
    let after: string | undefined
    do {
      const p = await this.store.listBotLogs(id, { conversationId }, { after, limit: 500 })
      logs.push(...p.items)
      after = logs.length < 2000 ? p.next : undefined
    } while (after)
    return { conversation, messages: page.items, truncated: page.next !== undefined, users, logs }
  }

  /** Where the console's live transcript reads: the conversation of the bot's chat integration (404 otherwise). */
  async streamTarget(workspaceId: string, botId: string, conversationId: string): Promise<{ integrationId: string; conversationId: string }> {
    const { chat } = await this.chatOf(workspaceId, botId)
    const conversation = chat && conversationId.length <= 200 && storable(conversationId) ? await this.store.getConversation(chat.id, conversationId) : undefined
    if (!chat || !conversation) throw errors.notFound('Conversation', conversationId)
    return { integrationId: chat.id, conversationId: conversation.id }
  }

  /** The matching messages, one database page at a time (at most ARCHIVE_LIMITS.exportPage rows in memory). */
  async *exportRows(workspaceId: string, botId: string, query: ArchiveQuery): AsyncGenerator<ExportRow[]> {
    const { botId: id, chat } = await this.chatOf(workspaceId, botId)
    if (!chat) return
    const f = this.filter(id, chat, query)
    let after: string | undefined
    do {
      const page = await this.store.conversationArchive.exportMessages(f, { after, limit: ARCHIVE_LIMITS.exportPage })
      yield page.items.map((m) => ({
        conversationId: m.conversationId, messageId: m.id, seq: m.seq, createdAt: new Date(m.createdAt).toISOString(), userId: m.userId,
        direction: m.isBot ? 'outgoing' : 'incoming', type: typeof m.payload.type === 'string' ? m.payload.type : '',
        text: typeof m.payload.text === 'string' ? m.payload.text : '', payload: JSON.stringify(m.payload),
      }))
      after = page.next
    } while (after)
  }
}
