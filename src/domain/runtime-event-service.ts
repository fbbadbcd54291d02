import { errors } from '../lib/errors.js'
import { encodeCursor } from '../store/cursor.js'
import { uuidv7 } from '../lib/ids.js'
import type { RuntimeEventFilter, RuntimeEventRow, RuntimeEventStatus } from '../store/runtime-event-store.js'
import type { BotRow, EventRow, IntegrationRow, JsonObject, Page, Store } from '../store/store.js'
import type { ChatService } from './chat-service.js'
import { integrationScope } from './bot-chat-service.js'
import type { RuntimeStateService } from './runtime-state-service.js'
import type { RuntimeWorkflowService } from './runtime-workflow-service.js'
import type { WorkflowEngine } from './workflow-engine.js'
import type { RecurringEventService } from './recurring-event-service.js'

/**
 * A bot-level event: an event of the Runtime API that has no conversation (createEvent without
 * conversationId, a scheduled one once due, `state_expired`). RuntimeEventService claims it from its
 * durable queue and hands it to BotRuntime.deliverBotEvent, the one seam where a bot gets such an
 * event: a sandboxed bot runs a bot-level turn; a bot served elsewhere (`url`) would get it as an
 * HTTP delivery instead. The event id is stable across redeliveries (a delivery whose lease expired
 * is made again, so at least once): a receiver can dedupe on it.
 */
export interface BotLevelEvent {
  id: string
  botId: string
  type: string
  payload: JsonObject
  userId: string | null
  messageId: string | null
  workflowId: string | null
  /** The conversation it concerns without being in it (a workflow_update of a conversation's workflow). */
  conversationId?: string | null | undefined
  createdAt: number
}

/** What became of a delivery: the event's final status (and why, when not processed). */
export type BotEventOutcome =
  | { status: 'processed' }
  | { status: 'ignored'; reason: string }
  | { status: 'failed'; reason: string }

export const EVENT_PAGE_SIZE = { default: 20, max: 100 }
/** A schedule at most this far ahead (ms). */
export const MAX_EVENT_DELAY_MS = 366 * 24 * 3600 * 1000
/** How long a claimed event stays with its claimer before another instance may deliver it again. */
const LEASE_MS = 60_000
/** Events delivered at once by one instance. */
const IN_FLIGHT = 8

/** The one place a bot-level event goes to its bot (BotRuntime.deliverBotEvent; see src/runtime/bot-events.ts). */
export interface BotEventDelivery {
  deliverBotEvent(event: BotLevelEvent): Promise<BotEventOutcome>
}

/** The Event object of the Runtime API. */
export interface EventView {
  id: string
  createdAt: string
  type: string
  payload: JsonObject
  conversationId?: string
  userId?: string
  messageId?: string
  status: RuntimeEventStatus
  failureReason: string | null
}

export interface CreateEventInput {
  type: string
  payload: JsonObject
  schedule?: { dateTime?: string | undefined; delay?: number | undefined } | undefined
  conversationId?: string | undefined
  userId?: string | undefined
  workflowId?: string | undefined
  messageId?: string | undefined
}

export interface RuntimeEventServiceOptions {
  store: Store
  chat: ChatService
  delivery: BotEventDelivery
  states: RuntimeStateService
  workflows: RuntimeWorkflowService
  /** Builds workflow_update events as they go out and queues what follows them (src/domain/workflow-engine.ts). */
  workflowEngine?: WorkflowEngine | undefined
  /** Fires the bots' recurring (cron) events on each poll. */
  recurring?: RecurringEventService | undefined
  /** How often each instance looks for due events, expired states and timed-out workflows (ms). */
  pollMs: number
  warn: (context: object, message: string) => void
  clock?: () => number
  /** createEvent by an installed integration (its key): its declared events only, typed `alias:event` (IntegrationDeclarations). */
  integrationEvents?: (bot: BotRow, input: CreateEventInput) => Promise<CreateEventInput>
}

/**
 * Runtime API events (createEvent, getEvent, listEvents, cancelScheduledEvent) and their delivery.
 *
 * Every event is a row of the durable queue (store.runtimeEvents). An event with a conversation
 * reaches the bot like a Chat API custom event: it is appended to the conversation's log (the bot
 * runtime's work queue) through ChatService.appendIncomingEvent, at once or when its schedule is
 * due; from then on the bot's cursor says whether it was processed. An event without a conversation
 * goes to BotRuntime.deliverBotEvent, and so does every state_expired event (a bot handles those
 * outside any conversation; its conversationId/userId say whose state it was). Each instance polls for due
 * rows (`pollMs`; no timer per event, so a far-future schedule costs nothing) and claims them with a
 * lease (renewed while a delivery runs), so a restart or a second instance on the same PostgreSQL neither loses nor doubles one
 * (a delivery cut short is made again with the same id once its lease expires: at least once). The
 * same poll removes expired states (queueing their state_expired events) and times out workflows.
 */
export class RuntimeEventService {
  private readonly store: Store
  private readonly clock: () => number
  private readonly owner = uuidv7()
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private stopped = true
  private readonly inFlight = new Set<Promise<void>>()

  constructor(private readonly options: RuntimeEventServiceOptions) {
    this.store = options.store
    this.clock = options.clock ?? Date.now
  }

  // ---- the API ----

  async create(bot: BotRow, given: CreateEventInput): Promise<EventView> {
    const input = this.options.integrationEvents ? await this.options.integrationEvents(bot, given) : given
    const now = this.clock()
    const dueAt = this.dueAt(input.schedule, now)
    const conversation = input.conversationId !== undefined ? await this.conversationOf(bot, input.conversationId) : undefined
    if (input.conversationId !== undefined && !conversation) throw errors.notFound('Conversation', input.conversationId)
    if (input.userId !== undefined && !(await this.userExists(bot, input.userId))) throw errors.notFound('User', input.userId)
    if (input.messageId !== undefined && !(await this.messageExists(bot, input.messageId))) throw errors.notFound('Message', input.messageId)
    if (input.workflowId !== undefined && !(await this.store.workflows.get(bot.id, input.workflowId))) throw errors.notFound('Workflow', input.workflowId)
    const scheduled = dueAt !== undefined
    // An event of a conversation created now is delivered by this request (claimed at insertion: if the
    // process dies before it is appended, the lease expires and the poll delivers it).
    const deliverNow = !scheduled && conversation !== undefined
    const row = await this.store.runtimeEvents.insert({
      id: uuidv7(), botId: bot.id, type: input.type, payload: input.payload,
      conversationId: input.conversationId, userId: input.userId, messageId: input.messageId, workflowId: input.workflowId,
      installationId: integrationScope(bot)?.id ?? null,
      status: scheduled ? 'scheduled' : 'pending', dueAt: dueAt ?? now, createdAt: now,
      ...(deliverNow && { lease: { owner: this.owner, until: now + LEASE_MS } }),
    })
    if (deliverNow) return this.view(await this.deliver(row) ?? row)
    if (!scheduled) this.wake()
    return this.view(row)
  }

  async get(bot: BotRow, id: string): Promise<EventView> {
    const row = await this.store.runtimeEvents.get(bot.id, id)
    if (row) return this.view(row)
    // A Chat API custom event (an end user's, in a conversation of one of the bot's integrations).
    for (const integration of await this.store.listIntegrations(bot.id)) {
      const event = await this.store.getEvent(integration.id, id)
      if (event) return this.chatEventView(integration, event)
    }
    throw errors.notFound('Event', id)
  }

  async list(bot: BotRow, filter: RuntimeEventFilter, nextToken: string | undefined, pageSize: number | undefined): Promise<{ events: EventView[]; next?: string | undefined }> {
    // The store reports an event appended to a conversation `processed` once the bot's turn for it ran (the filter too).
    // Runtime API events and the Chat API's custom events are two keyset lists in the same order: one page takes
    // the newest of both, and its token (the last item's createdAt and id) continues both.
    const limit = pageSize ?? EVENT_PAGE_SIZE.default
    // An integration key: the events its installation created and the Chat API events of its conversations (src/domain/installation-scope.ts).
    const scope = integrationScope(bot)
    const integrationIds = scope ? [scope.id] : (await this.store.listIntegrations(bot.id)).map((i) => i.id)
    const [own, chat] = await Promise.all([
      this.store.runtimeEvents.list(bot.id, { ...filter, installationId: scope?.id }, { after: nextToken, limit }),
      this.store.runtimeEvents.listChatEvents(bot.id, integrationIds, filter, { after: nextToken, limit }),
    ])
    const newestFirst = (a: RuntimeEventRow, b: RuntimeEventRow) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
    const merged = [...own.items, ...chat.items].sort(newestFirst)
    const items = merged.slice(0, limit)
    const more = merged.length > limit || own.next !== undefined || chat.next !== undefined
    const last = items.at(-1)
    const page: Page<RuntimeEventRow> = { items, ...(more && last && { next: encodeCursor([last.createdAt, last.id]) }) }
    return { events: page.items.map((row) => this.view(row)), next: page.next }
  }

  async cancelScheduled(bot: BotRow, id: string): Promise<void> {
    const canceled = await this.store.runtimeEvents.cancel(bot.id, id, this.clock())
    if (canceled === undefined) throw errors.notFound('Scheduled event', id)
    if (!canceled) throw errors.invalidPayload(`Event "${id}" is not scheduled (it was delivered or canceled already)`)
  }

  // ---- delivery ----

  start(): void {
    this.stopped = false
    this.timer = setInterval(() => this.wake(), this.options.pollMs)
    this.timer.unref()
    this.wake()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.running
    await Promise.allSettled([...this.inFlight])
  }

  /** Runs a poll now (or right after the one running). */
  wake(): void {
    if (this.stopped) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = (async () => {
      try {
        do {
          this.again = false
          await this.poll()
        } while (this.again && !this.stopped)
      } catch (err) {
        this.options.warn({ err }, 'Runtime events: a poll failed; the next one retries')
      } finally {
        this.running = undefined
      }
    })()
  }

  private async poll(): Promise<void> {
    while (!this.stopped && (await this.options.states.expireDue()) > 0) this.again = true
    await this.options.workflows.timeOutDue()
    await this.options.recurring?.fireDue()
    while (!this.stopped) {
      if (this.inFlight.size >= IN_FLIGHT) {
        await Promise.race([...this.inFlight])
        continue
      }
      const row = await this.store.runtimeEvents.claimDue(this.owner, this.clock(), LEASE_MS)
      if (!row) break
      const work = this.deliver(row).then(() => undefined, (err: unknown) => {
        this.options.warn({ err, eventId: row.id }, 'Runtime events: a delivery failed; it is made again when its lease expires')
      })
      this.inFlight.add(work)
      void work.finally(() => this.inFlight.delete(work))
    }
  }

  /** Delivers a claimed event and records the outcome; the row as it ends (undefined when the lease was lost). */
  private async deliver(row: RuntimeEventRow): Promise<RuntimeEventRow | undefined> {
    // A long delivery (a bot's turn may take minutes) keeps its lease: no other instance delivers it meanwhile.
    const renew = setInterval(() => {
      void this.store.runtimeEvents.extendLease(row.id, this.owner, this.clock() + LEASE_MS).catch(() => {})
    }, LEASE_MS / 3)
    try {
      return await this.deliverClaimed(row)
    } finally {
      clearInterval(renew)
    }
  }

  private async deliverClaimed(row: RuntimeEventRow): Promise<RuntimeEventRow | undefined> {
    let outcome: Parameters<Store['runtimeEvents']['finish']>[2]
    let next: Parameters<Store['runtimeEvents']['finish']>[4] = []
    const engine = this.options.workflowEngine
    if (engine?.handles(row)) {
      // A workflow's update: its payload is the workflow as it is now; what the bot left decides the next update.
      const prepared = await engine.prepare(row)
      const result: BotEventOutcome = prepared.deliver
        ? await this.options.delivery.deliverBotEvent({
          id: row.id, botId: row.botId, type: row.type, payload: prepared.payload, userId: prepared.userId, conversationId: prepared.conversationId,
          messageId: null, workflowId: row.workflowId, createdAt: row.createdAt,
        })
        : { status: 'ignored', reason: prepared.reason }
      outcome = result.status === 'processed' ? { status: 'processed' } : { status: result.status, failureReason: result.reason }
      next = await engine.next(row, result)
    } else if (row.conversationId !== null && row.type !== 'state_expired') {
      const bot = await this.store.getBot(row.botId)
      const conversation = bot && (await this.conversationOf(bot, row.conversationId))
      const appended = conversation && (await this.options.chat.appendIncomingEvent(conversation.integration, {
        id: row.id, conversationId: row.conversationId, userId: row.userId ?? row.botId, payload: row.payload,
      }))
      outcome = appended && conversation
        ? { status: 'pending', conversationSeq: appended.seq, integrationId: conversation.integration.id }
        : { status: 'failed', failureReason: `Conversation "${row.conversationId}" no longer exists` }
    } else {
      const result = await this.options.delivery.deliverBotEvent({
        id: row.id, botId: row.botId, type: row.type, payload: row.payload, userId: row.userId, messageId: row.messageId, workflowId: row.workflowId, createdAt: row.createdAt,
      })
      outcome = result.status === 'processed' ? { status: 'processed' } : { status: result.status, failureReason: result.reason }
    }
    const now = this.clock()
    if (!(await this.store.runtimeEvents.finish(row.id, this.owner, outcome, now, next))) return undefined
    if (outcome.status === 'pending') return (await this.store.runtimeEvents.get(row.botId, row.id)) ?? row
    return { ...row, status: outcome.status, failureReason: outcome.failureReason ?? null, processedAt: now, leaseOwner: null, leaseUntil: 0 }
  }

  // ---- helpers ----

  private dueAt(schedule: CreateEventInput['schedule'], now: number): number | undefined {
    if (schedule === undefined) return undefined
    const { dateTime, delay } = schedule
    if ((dateTime === undefined) === (delay === undefined)) throw errors.invalidPayload('schedule needs exactly one of dateTime or delay')
    const at = dateTime !== undefined ? Date.parse(dateTime) : now + delay!
    if (!Number.isFinite(at)) throw errors.invalidPayload('schedule.dateTime must be an ISO 8601 date')
    if (at - now > MAX_EVENT_DELAY_MS) throw errors.invalidPayload(`An event is scheduled at most ${MAX_EVENT_DELAY_MS / 86_400_000} days ahead`)
    return Math.max(at, now)
  }

  private async conversationOf(bot: BotRow, conversationId: string): Promise<{ integration: IntegrationRow } | undefined> {
    for (const integration of await this.store.listIntegrations(bot.id)) {
      if (await this.store.getConversation(integration.id, conversationId)) return { integration }
    }
    return undefined
  }

  private async userExists(bot: BotRow, userId: string): Promise<boolean> {
    if (userId === bot.id) return true
    for (const integration of await this.store.listIntegrations(bot.id)) if (await this.store.getUser(integration.id, userId)) return true
    return false
  }

  private async messageExists(bot: BotRow, messageId: string): Promise<boolean> {
    for (const integration of await this.store.listIntegrations(bot.id)) if (await this.store.getMessage(integration.id, messageId)) return true
    return false
  }

  private view(row: RuntimeEventRow): EventView {
    return {
      id: row.id,
      createdAt: new Date(row.createdAt).toISOString(),
      type: row.type,
      payload: row.payload,
      ...(row.conversationId !== null && { conversationId: row.conversationId }),
      ...(row.userId !== null && { userId: row.userId }),
      ...(row.messageId !== null && { messageId: row.messageId }),
      status: row.status,
      failureReason: row.failureReason,
    }
  }

  private async chatEventView(integration: IntegrationRow, event: EventRow): Promise<EventView> {
    const cursor = await this.store.getBotCursor(integration.id, event.conversationId)
    return {
      id: event.id,
      createdAt: new Date(event.createdAt).toISOString(),
      type: 'custom',
      payload: event.payload,
      conversationId: event.conversationId,
      userId: event.userId,
      status: event.botSkip ? 'ignored' : cursor && cursor.botSeq >= event.seq ? 'processed' : 'pending',
      failureReason: null,
    }
  }
}
