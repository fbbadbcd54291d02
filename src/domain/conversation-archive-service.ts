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

  /** The bot and its integrations, chat first (a conversation id is looked up in that order), every channel's. */
  private async integrationsOf(workspaceId: string, botId: string): Promise<{ botId: string; integrations: IntegrationRow[] }> {
    const { bot, integrations } = await this.bots.getBot(workspaceId, botId)
    return { botId: bot.id, integrations: [...integrations.filter((i) => i.name === 'chat'), ...integrations.filter((i) => i.name !== 'chat')] }
  }

  /** The conversation `conversationId` of one of the bot's integrations (the first that has it), or a 404. */
  private async conversationOf(workspaceId: string, botId: string, conversationId: string): Promise<{ botId: string; integrationId: string }> {
    const { botId: id, integrations } = await this.integrationsOf(workspaceId, botId)
    const found = conversationId.length <= 200 && storable(conversationId)
      ? await this.store.botChat.getConversation(integrations.map((i) => i.id), conversationId) : undefined
    if (!found) throw errors.notFound('Conversation', conversationId)
    return { botId: id, integrationId: found.integrationId }
  }

  private filter(botId: string, integrations: IntegrationRow[], query: ArchiveQuery): ArchiveFilter {
    const q = query.q?.trim()
    if (q !== undefined && (q.length > ARCHIVE_LIMITS.maxQuery || !storable(q))) throw errors.invalidQuery(`q must be at most ${ARCHIVE_LIMITS.maxQuery} characters of text`)
    if (query.conversationId !== undefined && (query.conversationId.length > 200 || !storable(query.conversationId))) throw errors.invalidQuery('conversationId is not a conversation id')
    return {
      integrationIds: integrations.map((i) => i.id), botId, q: q || undefined, from: time('from', query.from), to: time('to', query.to),
      failed: query.failed, handoff: query.handoff, conversationId: query.conversationId,
    }
  }

  async search(workspaceId: string, botId: string, query: ArchiveQuery, nextToken: string | undefined): Promise<Page<ArchiveConversation>> {
    const { botId: id, integrations } = await this.integrationsOf(workspaceId, botId)
    return this.store.conversationArchive.searchConversations(this.filter(id, integrations, query), { after: nextToken, limit: ARCHIVE_LIMITS.pageSize })
  }

  async transcript(workspaceId: string, botId: string, conversationId: string): Promise<Transcript> {
    const { botId: id, integrationId } = await this.conversationOf(workspaceId, botId, conversationId)
    const found = await this.store.conversationArchive.searchConversations({ integrationIds: [integrationId], botId: id, conversationId }, { limit: 1 })
    const conversation = found.items[0]
    if (!conversation) throw errors.notFound('Conversation', conversationId)
    const page = await this.store.conversationArchive.exportMessages(
      { integrationIds: [integrationId], botId: id, conversationId }, { limit: ARCHIVE_LIMITS.transcriptMessages })
    const userIds = [...new Set([...(conversation.ownerId ? [conversation.ownerId] : []), ...page.items.map((m) => m.userId)])]
    const users = (await this.store.botChat.getUsers(integrationId, userIds)).map(({ tags: _t, properties: _p, attributes: _a, ...u }) => u)
    const logs: BotLogRow[] = []
    let after: string | undefined
    do {
      const p = await this.store.listBotLogs(id, { conversationId }, { after, limit: 500 })
      logs.push(...p.items)
      after = logs.length < 2000 ? p.next : undefined
    } while (after)
    return { conversation, messages: page.items, truncated: page.next !== undefined, users, logs }
  }

  /** Where the console's live transcript reads: the conversation of one of the bot's integrations (404 otherwise). */
  async streamTarget(workspaceId: string, botId: string, conversationId: string): Promise<{ integrationId: string; conversationId: string }> {
    const { integrationId } = await this.conversationOf(workspaceId, botId, conversationId)
    return { integrationId, conversationId }
  }

  /** The matching messages, one database page at a time (at most ARCHIVE_LIMITS.exportPage rows in memory). */
  async *exportRows(workspaceId: string, botId: string, query: ArchiveQuery): AsyncGenerator<ExportRow[]> {
    const { botId: id, integrations } = await this.integrationsOf(workspaceId, botId)
    const f = this.filter(id, integrations, query)
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
