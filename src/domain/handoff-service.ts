import { createHash, randomUUID } from 'node:crypto'
import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import type { HandoffNoteRow, HandoffRow, HandoffStatus } from '../store/handoff-store.js'
import type { AccountRow, AppendNotification, BotRow, EventRow, IntegrationRow, JsonObject, MessageRow, Store } from '../store/store.js'
import { conversationChanged } from './conversation-log.js'
import type { ConversationLog } from './conversation-log.js'
import { normalizePayload } from './payloads.js'
import type { BotService } from './bot-service.js'
import type { FileService } from './file-service.js'
import { can, type Role } from './permissions.js'
import { MetricsRegistry, type Counter, type Histogram } from '../lib/metrics.js'

const DAY_MS = 86_400_000
/** Page sizes of the handoff listing, and how many notes a handoff shows. */
export const HANDOFF_LIMITS = { pageSize: 50, notesShown: 200, maxNoteLength: 10_000, maxReasonLength: 1_000, maxDays: 366 }

/** The event types bot code sees when a handoff starts or ends. */
export type HandoffEventType = 'handoff_started' | 'handoff_ended'

/** The Admin API's Handoff (ISO dates). */
export interface HandoffView {
  id: string
  botId: string
  conversationId: string
  userId: string
  status: HandoffStatus
  reason?: string
  requestedAt: string
  claimedBy?: { memberId: string; name: string; avatarUrl?: string }
  claimedAt?: string
  endedAt?: string
  notes: { memberId: string; text: string; createdAt: string }[]
}

/** One UTC day of handoff statistics (GET /v1/admin/bots/{id}/handoffs/stats). */
export interface HandoffStatsRecord {
  startDateTimeUtc: string
  endDateTimeUtc: string
  /** Handoffs requested that day. */
  requested: number
  /** Of those, claimed by an agent (at any time since). */
  claimed: number
  /** Of those, ended (returned to the bot, claimed or not). */
  ended: number
  /** Wait time (request → claim) of the claimed ones, in seconds; zeros when none was claimed. */
  waitSeconds: { mean: number; max: number; median: number }
}

const iso = (ms: number) => new Date(ms).toISOString()

export function handoffView(h: HandoffRow, notes: HandoffNoteRow[] = []): HandoffView {
  return {
    id: h.id,
    botId: h.botId,
    conversationId: h.conversationId,
    userId: h.userId,
    status: h.status,
    ...(h.reason !== null && { reason: h.reason }),
    requestedAt: iso(h.requestedAt),
    ...(h.claimedBy !== null && { claimedBy: { memberId: h.claimedBy, name: h.claimedName ?? h.claimedBy } }),
    ...(h.claimedAt !== null && { claimedAt: iso(h.claimedAt) }),
    ...(h.endedAt !== null && { endedAt: iso(h.endedAt) }),
    notes: notes.map((n) => ({ memberId: n.memberId, text: n.text, createdAt: iso(n.createdAt) })),
  }
}

/**
 * The marker events of a handoff in the conversation's log. Their ids start with `handoff:`, which no
 * other event id can (the Chat and Runtime APIs make uuids): a user cannot forge one with createEvent.
 */
const markerId = (handoffId: string, what: 'started' | 'ended') => `handoff:${handoffId}:${what}`

/** The handoff event type of a log event, if it is one of the markers. */
export function handoffEventType(event: Pick<EventRow, 'id' | 'payload'>): HandoffEventType | undefined {
  if (!event.id.startsWith('handoff:')) return undefined
  const type = event.payload.type
  return type === 'handoff_started' || type === 'handoff_ended' ? type : undefined
}

/** A uuid-shaped id derived from `seed` (the joined/left lines: written once even when two instances race). */
function seededId(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The conversation user an agent writes as: one per member and integration (not a participant; messages carry the name). */
function agentUserId(accountId: string): string {
  return `agent-${createHash('sha256').update(accountId).digest('hex').slice(0, 32)}`
}

export interface HandoffOptions {
  /** The bot runtime's "this conversation has work" notification (handoff events run turns). */
  turnNotification: (integrationId: string, conversationId: string) => Promise<AppendNotification | undefined>
  /** The Chat API's payload rules, for the agents' replies. */
  validatePayload: (payload: unknown) => string | undefined
  clock?: () => number
  /** The instance's registry: handoffs started, claimed and ended here, and their wait before a claim. */
  metrics?: MetricsRegistry | undefined
  /** The Files API's service: agents' attachments (createUpload). */
  files?: Pick<FileService, 'upsertFile'> | undefined
}

/** An agent's attachment, before its content is uploaded. */
export interface HandoffUpload {
  /** The Files API's signed upload URL: PUT the content there. */
  uploadUrl: string
  /** Where the content is served once uploaded (stable: public_content), for the reply's image or file payload. */
  url: string
  fileId: string
  contentType: string
  size: number
}

const WAIT_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600]

/** Who acts on a handoff through the Admin API. */
export interface HandoffCaller { account: AccountRow; role: Role }

/**
 * Human handoff (README "Human handoff"): a conversation handed from the bot to a workspace member.
 * - Started by bot code (client.startHandoff, a `handoff` workflow card), the Runtime API or the Admin API;
 *   ended the same ways or by the agent ("return to the bot").
 * - While a conversation has an open handoff, the bot runtime runs no hooks or workflows for the user's
 *   messages (BotRuntime asks `isHandedOff` per turn); its marker events (`handoff_started`, `handoff_ended`,
 *   appended to the conversation's log) do run turns, so bot code sees them in order.
 * - Agents' replies, and the "joined"/"left" lines, are messages of the conversation (isBot: true, no turn)
 *   from an agent user, with `metadata.handoff` = { agent: { name }, event?: 'joined' | 'left' }: every
 *   client receives them through the stream as any message.
 * - Internal notes are rows of the handoff, never in the conversation.
 */
export class HandoffService {
  private readonly clock: () => number
  private readonly counted: Counter
  private readonly waits: Histogram

  constructor(private readonly store: Store, private readonly log: ConversationLog, private readonly bots: BotService, private readonly options: HandoffOptions) {
    this.clock = options.clock ?? Date.now
    const metrics = options.metrics ?? new MetricsRegistry()
    this.counted = metrics.counter('parley_handoffs_total', 'Human handoffs by event (started, claimed, ended) on this instance', ['event'])
    this.waits = metrics.histogram('parley_handoff_wait_seconds', 'Wait of human handoffs from their request to their first claim, in seconds', WAIT_BUCKETS)
  }

  // ---- the bot side (sandboxed client, Runtime API) ----

  /** Whether a handoff of the conversation covered the instant `at` (the bot runtime, per incoming message: its createdAt). */
  handedOffAt(integrationId: string, conversationId: string, at: number): Promise<boolean> {
    return this.store.handoffs.coveredAt(integrationId, conversationId, at)
  }

  /** Whether a conversation is handed off now (the beforeIncoming hook of a message being written). */
  async isHandedOff(integrationId: string, conversationId: string): Promise<boolean> {
    return (await this.store.handoffs.getOpen(integrationId, conversationId)) !== undefined
  }

  /**
   * Starts a handoff of one of the bot's chat conversations (or returns the open one). `userId`: the user it is
   * for, when the conversation has no owner (a conversation the bot created): the author of a message, by default.
   */
  async startForBot(bot: BotRow, conversationId: string, input: { reason?: string | undefined; userId?: string | undefined }): Promise<HandoffView> {
    const integration = await this.chatIntegration(bot)
    return handoffView(await this.open(bot, integration, conversationId, input))
  }

  async endForBot(bot: BotRow, conversationId: string): Promise<HandoffView> {
    const integration = await this.chatIntegration(bot)
    const open = await this.store.handoffs.getOpen(integration.id, conversationId)
    if (!open) {
      await this.conversation(integration, conversationId)
      const latest = await this.store.handoffs.latest(bot.id, conversationId)
      if (latest) return handoffView(latest)
      throw errors.notFound('Handoff of conversation', conversationId)
    }
    return handoffView(await this.close(integration, open))
  }

  // ---- the Admin API ----

  async list(workspaceId: string, botId: string, status: HandoffStatus | undefined, nextToken: string | undefined): Promise<{ handoffs: HandoffView[]; next?: string | undefined }> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const page = await this.store.handoffs.list(bot.id, status, { after: nextToken, limit: HANDOFF_LIMITS.pageSize })
    const notes = await this.store.handoffs.notesOf(page.items.map((h) => h.id), HANDOFF_LIMITS.notesShown)
    return { handoffs: page.items.map((h) => handoffView(h, notes.get(h.id))), next: page.next }
  }

  async start(workspaceId: string, botId: string, conversationId: string, reason: string | undefined): Promise<HandoffView> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const integration = await this.chatIntegration(bot)
    return this.withNotes(await this.open(bot, integration, conversationId, { reason }))
  }

  async get(workspaceId: string, botId: string, conversationId: string): Promise<HandoffView> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    return this.withNotes(await this.latest(bot, conversationId))
  }

  /** Claims the open handoff for `memberId` (default: the caller; another member needs handoffs.assign). 409 when someone else holds it. */
  async claim(workspaceId: string, botId: string, conversationId: string, caller: HandoffCaller, memberId?: string): Promise<HandoffView> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const integration = await this.chatIntegration(bot)
    const open = await this.openHandoff(integration, conversationId)
    let member = caller.account
    if (memberId !== undefined && memberId !== caller.account.id) {
      if (!can(caller.role, 'handoffs.assign')) throw errors.forbidden(`Your role "${caller.role}" may not assign a handoff to another member (manager or above)`)
      const target = await this.store.getMember(workspaceId, memberId)
      if (!target) throw errors.notFound('Workspace member', memberId)
      if (!can(target.role as Role, 'handoffs.write')) throw errors.invalidPayload(`Member "${memberId}" has the role "${target.role}", which does not answer handoffs`)
      member = target.account
    }
    return this.withNotes(await this.claimFor(integration, open, member))
  }

  /** An agent's reply (a Chat API payload), or an internal note. The reply needs the caller's claim (taken now if the handoff waits). */
  async send(workspaceId: string, botId: string, conversationId: string, caller: HandoffCaller, input: { payload: JsonObject } | { note: string }): Promise<{ message: MessageRow } | { note: HandoffNoteRow }> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const integration = await this.chatIntegration(bot)
    if ('note' in input) {
      const handoff = await this.latest(bot, conversationId)
      if (input.note.trim() === '') throw errors.invalidPayload('note must not be empty')
      if (input.note.length > HANDOFF_LIMITS.maxNoteLength) throw errors.invalidPayload(`note is longer than ${HANDOFF_LIMITS.maxNoteLength} characters`)
      const note: HandoffNoteRow = { id: uuidv7(), handoffId: handoff.id, memberId: caller.account.id, text: input.note, createdAt: this.clock() }
      await this.store.handoffs.addNote(note)
      return { note }
    }
    const problem = this.options.validatePayload(input.payload)
    if (problem) throw errors.invalidPayload(problem)
    const open = await this.openHandoff(integration, conversationId)
    const held = await this.claimFor(integration, open, caller.account)
    const message = await this.agentMessage(integration, held, caller.account, normalizePayload(input.payload), undefined)
    return { message }
  }

  /**
   * An attachment for the agent's next reply: a file of the bot through the Files API (key
   * `handoff/<conversationId>/<uuid>/<name>`, tagged `source: handoff`, public_content so the user's webchat can show
   * it, the Files API's size limit), then the agent replies with an image or file payload pointing at `url`. Needs the
   * caller's claim, like a reply (taken if the handoff waits; 409 if someone else holds it).
   */
  async createUpload(workspaceId: string, botId: string, conversationId: string, caller: HandoffCaller, input: { name: string; contentType: string; size: number }): Promise<HandoffUpload> {
    const files = this.options.files
    if (!files) throw errors.forbidden('This server has no file storage for agents\' attachments')
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const integration = await this.chatIntegration(bot)
    const open = await this.openHandoff(integration, conversationId)
    await this.claimFor(integration, open, caller.account)
    const name = input.name.replace(/[\\/\u0000-\u001f\u007f]/g, '_').slice(0, 200) || 'file'
    const file = await files.upsertFile(bot.id, { kind: 'account', account: caller.account, tokenId: 'handoff' }, {
      key: `handoff/${open.conversationId}/${randomUUID()}/${name}`,
      size: input.size,
      contentType: input.contentType,
      accessPolicies: ['public_content'],
      tags: { source: 'handoff', conversationId: open.conversationId, memberId: caller.account.id },
      metadata: { name },
    })
    return { uploadUrl: file.uploadUrl, url: file.url, fileId: file.id, contentType: file.contentType, size: input.size }
  }

  /** Returns the conversation to the bot: the holder, anyone while it waits, or a member who may assign handoffs. */
  async end(workspaceId: string, botId: string, conversationId: string, caller: HandoffCaller): Promise<HandoffView> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const integration = await this.chatIntegration(bot)
    const open = await this.openHandoff(integration, conversationId)
    if (open.claimedBy !== null && open.claimedBy !== caller.account.id && !can(caller.role, 'handoffs.assign')) {
      throw errors.locked(`${open.claimedName ?? open.claimedBy} holds this handoff; only they (or a manager) may end it`)
    }
    return this.withNotes(await this.close(integration, open))
  }

  /** Handoffs per UTC day of their request, with their wait times (the console's dashboard). */
  async stats(workspaceId: string, botId: string, startDate: string, endDate: string): Promise<HandoffStatsRecord[]> {
    const { bot } = await this.bots.getBot(workspaceId, botId)
    const first = dayOf(startDate, 'startDate')
    const last = dayOf(endDate, 'endDate')
    if (last < first) throw errors.invalidQuery(`endDate (${endDate}) is before startDate (${startDate})`)
    if (last - first + 1 > HANDOFF_LIMITS.maxDays) throw errors.invalidQuery(`The range covers ${last - first + 1} days; at most ${HANDOFF_LIMITS.maxDays} per call`)
    const timings = await this.store.handoffs.timings(bot.id, first * DAY_MS, (last + 1) * DAY_MS)
    const records: HandoffStatsRecord[] = []
    for (let day = first; day <= last; day++) {
      const of = timings.filter((t) => Math.floor(t.requestedAt / DAY_MS) === day)
      const waits = of.filter((t) => t.claimedAt !== null).map((t) => (t.claimedAt! - t.requestedAt) / 1000).sort((a, b) => a - b)
      const mid = waits.length >> 1
      records.push({
        startDateTimeUtc: iso(day * DAY_MS),
        endDateTimeUtc: iso((day + 1) * DAY_MS - 1),
        requested: of.length,
        claimed: waits.length,
        ended: of.filter((t) => t.endedAt !== null).length,
        waitSeconds: waits.length === 0 ? { mean: 0, max: 0, median: 0 } : {
          mean: waits.reduce((s, w) => s + w, 0) / waits.length,
          max: waits[waits.length - 1]!,
          median: waits.length % 2 ? waits[mid]! : (waits[mid - 1]! + waits[mid]!) / 2,
        },
      })
    }
    return records
  }

  // ---- inside ----

  private async withNotes(h: HandoffRow): Promise<HandoffView> {
    return handoffView(h, await this.store.handoffs.notes(h.id, HANDOFF_LIMITS.notesShown))
  }

  private async chatIntegration(bot: BotRow): Promise<IntegrationRow> {
    const chat = (await this.store.listIntegrations(bot.id)).find((i) => i.name === 'chat')
    if (!chat) throw errors.notFound('Chat integration of bot', bot.id)
    return chat
  }

  private async conversation(integration: IntegrationRow, conversationId: string) {
    const conversation = conversationId.length <= 200 ? await this.store.getConversation(integration.id, conversationId) : undefined
    if (!conversation) throw errors.notFound('Conversation', conversationId)
    return conversation
  }

  private async latest(bot: BotRow, conversationId: string): Promise<HandoffRow> {
    const h = conversationId.length <= 200 ? await this.store.handoffs.latest(bot.id, conversationId) : undefined
    if (!h) throw errors.notFound('Handoff of conversation', conversationId)
    return h
  }

  private async openHandoff(integration: IntegrationRow, conversationId: string): Promise<HandoffRow> {
    const open = conversationId.length <= 200 ? await this.store.handoffs.getOpen(integration.id, conversationId) : undefined
    if (!open) throw errors.notFound('Open handoff of conversation', conversationId)
    return open
  }

  private async open(bot: BotRow, integration: IntegrationRow, conversationId: string, input: { reason?: string | undefined; userId?: string | undefined }): Promise<HandoffRow> {
    if (input.reason !== undefined && (typeof input.reason !== 'string' || input.reason.length > HANDOFF_LIMITS.maxReasonLength)) {
      throw errors.invalidPayload(`reason must be a string of at most ${HANDOFF_LIMITS.maxReasonLength} characters`)
    }
    const conversation = await this.conversation(integration, conversationId)
    const userId = conversation.ownerId ?? input.userId ?? (await this.lastUserOf(integration, conversationId)) ?? bot.id
    const { handoff, created } = await this.store.handoffs.open({
      id: uuidv7(), botId: bot.id, integrationId: integration.id, conversationId, userId, reason: input.reason ?? null, requestedAt: this.clock(),
    })
    if (created) {
      this.counted.inc({ event: 'started' })
      await this.marker(integration, handoff, 'started')
    }
    return handoff
  }

  private async lastUserOf(integration: IntegrationRow, conversationId: string): Promise<string | undefined> {
    const page = await this.store.listMessages(integration.id, conversationId, { limit: 50 })
    return page.items.find((m) => !m.isBot)?.userId
  }

  private async claimFor(integration: IntegrationRow, open: HandoffRow, member: AccountRow): Promise<HandoffRow> {
    const result = await this.store.handoffs.claim(open.id, member.id, member.displayName, this.clock())
    if (result.outcome === 'closed') throw errors.notFound('Open handoff of conversation', open.conversationId)
    if (result.outcome === 'taken') throw errors.locked(`${result.handoff.claimedName ?? result.handoff.claimedBy} already holds this handoff`)
    // The first claim (not a repeat by the same member) says so in the conversation.
    if (open.claimedBy === null) {
      this.counted.inc({ event: 'claimed' })
      this.waits.observe(Math.max(0, ((result.handoff.claimedAt ?? this.clock()) - open.requestedAt) / 1000))
      // Seeded id: a claim answered twice (a retried request) writes the line once.
      const joined = seededId(`handoff:${open.id}:joined:${member.id}`)
      await this.agentMessage(integration, result.handoff, member, { type: 'text', text: `${member.displayName} joined the conversation` }, 'joined', joined)
    }
    return result.handoff
  }

  private async close(integration: IntegrationRow, open: HandoffRow): Promise<HandoffRow> {
    const ended = await this.store.handoffs.end(open.id, this.clock())
    if (!ended) {
      // Ended meanwhile (another agent, the bot): the same answer.
      const latest = await this.store.handoffs.latest(open.botId, open.conversationId)
      if (latest) return latest
      throw errors.notFound('Open handoff of conversation', open.conversationId)
    }
    this.counted.inc({ event: 'ended' })
    if (ended.claimedBy !== null) {
      const name = ended.claimedName ?? 'The agent'
      await this.agentMessage(integration, ended, { id: ended.claimedBy, displayName: name }, { type: 'text', text: `${name} left the conversation` }, 'left', seededId(`handoff:${ended.id}:left`))
    }
    await this.marker(integration, ended, 'ended')
    return ended
  }

  /** A message of the conversation from the agent's user (isBot: true: no bot turn; the bot's side of the conversation). */
  private async agentMessage(
    integration: IntegrationRow, handoff: HandoffRow, member: Pick<AccountRow, 'id' | 'displayName'>, payload: JsonObject, event: 'joined' | 'left' | undefined, id = uuidv7(),
  ): Promise<MessageRow> {
    const userId = agentUserId(member.id)
    if (!(await this.store.getUser(integration.id, userId))) {
      await this.store.createUser({ integrationId: integration.id, id: userId, name: member.displayName, isBot: true, now: this.clock() }).catch(() => {})
    }
    const metadata: JsonObject = { handoff: { agent: { name: member.displayName }, ...(event && { event }) } }
    // The same line written already, by a concurrent request or an earlier one (seeded id): that one stands.
    const logged = await this.log.appendMessage({
      id, integrationId: integration.id, conversationId: handoff.conversationId, userId, isBot: true, payload, metadata, botSkip: true,
      notify: [conversationChanged(integration.id, handoff.conversationId)], ifAbsent: true, now: this.clock(),
    })
    if (!logged) throw errors.notFound('Conversation', handoff.conversationId)
    return logged.row
  }

  /** Appends the start or end marker to the conversation's log: the bot runs a turn for it, in order with the messages. */
  private async marker(integration: IntegrationRow, handoff: HandoffRow, what: 'started' | 'ended'): Promise<void> {
    const id = markerId(handoff.id, what)
    const turn = await this.options.turnNotification(integration.id, handoff.conversationId)
    const notify = [conversationChanged(integration.id, handoff.conversationId), ...(turn ? [turn] : [])]
    const payload: JsonObject = {
      type: what === 'started' ? 'handoff_started' : 'handoff_ended',
      handoffId: handoff.id,
      ...(handoff.reason !== null && { reason: handoff.reason }),
      ...(handoff.claimedName !== null && what === 'ended' && { agent: { name: handoff.claimedName } }),
    }
    // Once per handoff and side (seeded id): a marker already there stays as it is.
    await this.log.appendEvent({
      id, integrationId: integration.id, conversationId: handoff.conversationId, userId: handoff.userId, isBot: false, payload, notify, ifAbsent: true, now: this.clock(),
    })
  }
}

function dayOf(value: string, name: string): number {
  const ms = typeof value === 'string' && value.length <= 64 ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(ms)) throw errors.invalidQuery(`${name} must be an ISO 8601 date or date-time (e.g. 2026-11-26), got ${JSON.stringify(String(value).slice(0, 64))}`)
  return Math.floor(ms / DAY_MS)
}
