import type { JsonObject, Page, PageRequest } from './rows.js'

/**
 * Events of the Runtime API (migrations/<dialect>/0007_runtime_state.sql): what createEvent stores
 * and what Parley raises itself (state_expired). A row is the durable queue entry of its delivery:
 * `scheduled` (due later) and `pending` rows whose due time has come are claimed with a lease, as
 * webhook deliveries are, so several instances share the queue and a dead one's claims are taken over.
 * Events of a conversation are delivered by appending them to the conversation's log (the bot
 * runtime's work queue); `conversationSeq` records where, and from then on the store reports it
 * `processed` once the bot's cursor in that conversation has passed it (reads and the status filter alike).
 */
export type RuntimeEventStatus = 'pending' | 'processed' | 'ignored' | 'failed' | 'scheduled' | 'canceled'

export interface RuntimeEventRow {
  id: string
  botId: string
  type: string
  payload: JsonObject
  conversationId: string | null
  userId: string | null
  messageId: string | null
  workflowId: string | null
  status: RuntimeEventStatus
  failureReason: string | null
  /** When it is (or was) due, ms. */
  dueAt: number
  attempts: number
  leaseOwner: string | null
  leaseUntil: number
  /** Set once appended to its conversation's log (of that integration's conversation). */
  conversationSeq: number | null
  integrationId: string | null
  /** The integration installation whose API key created it (null: the bot or Parley); an integration key sees only its own. */
  installationId: string | null
  createdAt: number
  processedAt: number | null
}

export type NewRuntimeEvent = Pick<RuntimeEventRow, 'id' | 'botId' | 'type' | 'payload' | 'dueAt' | 'createdAt'> & {
  conversationId?: string | null | undefined
  userId?: string | null | undefined
  messageId?: string | null | undefined
  workflowId?: string | null | undefined
  installationId?: string | null | undefined
  status: 'pending' | 'scheduled'
  /** Inserted already claimed by `owner` until `until` (the creating request delivers it itself). */
  lease?: { owner: string; until: number } | undefined
}

export interface RuntimeEventFilter {
  type?: string | undefined
  conversationId?: string | undefined
  userId?: string | undefined
  messageId?: string | undefined
  workflowId?: string | undefined
  status?: RuntimeEventStatus | undefined
  /** Only the events created by that installation's key. */
  installationId?: string | undefined
}

/** How a claimed event ended: a final status, or appended to its conversation's log at `conversationSeq`. */
export type RuntimeEventOutcome =
  | { status: 'processed' | 'ignored' | 'failed'; failureReason?: string | null | undefined }
  | { status: 'pending'; conversationSeq: number; integrationId: string }

export interface RuntimeEventStore {
  insert(event: NewRuntimeEvent): Promise<RuntimeEventRow>
  get(botId: string, id: string): Promise<RuntimeEventRow | undefined>
  /** Newest first (createdAt, id); `after` is the previous page's token. */
  list(botId: string, filter: RuntimeEventFilter, page: PageRequest): Promise<Page<RuntimeEventRow>>
  /**
   * The Chat API's custom events (and the bot's own, from its turns) in the conversations of these
   * integrations, as runtime events of `botId` (type `custom`; status `ignored` when the bot's
   * beforeIncoming hook stopped it, `processed` once the bot's cursor passed it or when the bot wrote it,
   * else `pending`), newest first; events that are Runtime API events themselves are left out (`list`
   * has them). Same filters and token as `list`, so that the two merge into one page.
   */
  listChatEvents(botId: string, integrationIds: string[], filter: RuntimeEventFilter, page: PageRequest): Promise<Page<RuntimeEventRow>>
  /** A scheduled event becomes `canceled`: undefined when there is none, false when it is not (or no longer) scheduled. */
  cancel(botId: string, id: string, now: number): Promise<boolean | undefined>
  /**
   * Leases the earliest due event (scheduled or pending, due at `now`, not yet in a conversation log,
   * lease free or expired), or undefined. Atomic across instances.
   */
  claimDue(owner: string, now: number, leaseMs: number): Promise<RuntimeEventRow | undefined>
  /**
   * Ends a claimed event if `owner` still holds it and, in the same transaction, queues `next` (the events that follow
   * it: a workflow's next update); false (nothing queued) when the lease was lost (another instance took it over).
   */
  finish(id: string, owner: string, outcome: RuntimeEventOutcome, now: number, next?: NewRuntimeEvent[]): Promise<boolean>
  /** Moves the lease of an event `owner` still holds (a long delivery). */
  extendLease(id: string, owner: string, until: number): Promise<void>
  /** Gives a claimed event back (shutdown): claimable again at once. */
  release(id: string, owner: string): Promise<void>
}
