import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import type { BotRow, JsonObject, Page, Store } from '../store/store.js'
import { integrationScope } from './bot-chat-service.js'
import { ACTIVE_WORKFLOW_STATUSES, FINISHED_WORKFLOW_STATUSES, type WorkflowEvents, type WorkflowFilter, type WorkflowRow, type WorkflowStatus } from '../store/workflow-store.js'

/** A workflow created without timeoutAt times out after this long. */
export const DEFAULT_WORKFLOW_TIMEOUT_MS = 24 * 3600 * 1000
export const WORKFLOW_PAGE_SIZE = { default: 20, max: 100 }
const MAX_TAGS = 50
const TIMEOUT_BATCH = 500

/** The Workflow object of the Runtime API. */
export function workflowView(w: WorkflowRow) {
  return {
    id: w.id,
    name: w.name,
    status: w.status,
    input: w.input,
    output: w.output,
    ...(w.parentWorkflowId !== null && { parentWorkflowId: w.parentWorkflowId }),
    ...(w.conversationId !== null && { conversationId: w.conversationId }),
    ...(w.userId !== null && { userId: w.userId }),
    createdAt: new Date(w.createdAt).toISOString(),
    updatedAt: new Date(w.updatedAt).toISOString(),
    ...(w.completedAt !== null && { completedAt: new Date(w.completedAt).toISOString() }),
    ...(w.failureReason !== null && { failureReason: w.failureReason }),
    timeoutAt: new Date(w.timeoutAt).toISOString(),
    tags: w.tags,
  }
}

export interface WorkflowInput {
  name: string
  input?: JsonObject | undefined
  parentWorkflowId?: string | undefined
  conversationId?: string | undefined
  userId?: string | undefined
  timeoutAt?: string | undefined
  tags?: Record<string, string> | undefined
  status: 'pending' | 'in_progress' | 'listening'
  eventId?: string | undefined
}

export interface WorkflowUpdate {
  output?: JsonObject | undefined
  timeoutAt?: string | undefined
  status?: 'completed' | 'cancelled' | 'listening' | 'paused' | 'failed' | 'in_progress' | undefined
  failureReason?: string | undefined
  tags?: Record<string, string | null> | undefined
  userId?: string | undefined
  eventId?: string | undefined
}

/**
 * Runtime API workflows: stored, listed with the client's filters, updated (status, output, tags, timeouts) as the bot
 * says; active workflows past their timeoutAt become `timedout` (the event dispatcher's sweep). Every change hands
 * `events` (WorkflowEngine.events, src/domain/workflow-engine.ts) to the store, which queues the workflow_update
 * events it implies in the same transaction: that is what runs them (docs/workflows.md).
 */
export class RuntimeWorkflowService {
  private readonly clock: () => number
  private readonly events: WorkflowEvents | undefined

  constructor(private readonly store: Store, options: { clock?: () => number; events?: WorkflowEvents } = {}) {
    this.clock = options.clock ?? Date.now
    this.events = options.events
  }

  private parseDate(field: string, value: string): number {
    const at = Date.parse(value)
    if (!Number.isFinite(at)) throw errors.invalidPayload(`${field} must be an ISO 8601 date`)
    return at
  }

  private checkTags(tags: Record<string, string | null> | undefined): void {
    if (tags && Object.keys(tags).length > MAX_TAGS) throw errors.invalidPayload(`A workflow has at most ${MAX_TAGS} tags`)
  }

  /** The conversation and user a workflow names must be the bot's (404 otherwise), its parent one of its workflows. */
  private async checkRefs(bot: BotRow, refs: { conversationId?: string | undefined; userId?: string | undefined; parentWorkflowId?: string | undefined }): Promise<void> {
    const integrations = refs.conversationId !== undefined || refs.userId !== undefined ? await this.store.listIntegrations(bot.id) : []
    if (refs.conversationId !== undefined) {
      const found = await Promise.all(integrations.map((i) => this.store.getConversation(i.id, refs.conversationId!)))
      if (!found.some(Boolean)) throw errors.notFound('Conversation', refs.conversationId)
    }
    if (refs.userId !== undefined) {
      const found = await Promise.all(integrations.map((i) => this.store.getUser(i.id, refs.userId!)))
      if (!found.some(Boolean)) throw errors.notFound('User', refs.userId)
    }
    if (refs.parentWorkflowId !== undefined && !(await this.store.workflows.get(bot.id, refs.parentWorkflowId))) {
      throw errors.notFound('Workflow', refs.parentWorkflowId)
    }
  }

  private async newWorkflow(bot: BotRow, input: WorkflowInput) {
    if (input.status === 'in_progress' && input.eventId === undefined) throw errors.invalidPayload('eventId is required when a workflow is created in_progress')
    this.checkTags(input.tags)
    await this.checkRefs(bot, input)
    const now = this.clock()
    return {
      id: uuidv7(), botId: bot.id, name: input.name, status: input.status as WorkflowStatus, input: input.input ?? {},
      parentWorkflowId: input.parentWorkflowId ?? null, conversationId: input.conversationId ?? null, userId: input.userId ?? null,
      eventId: input.eventId ?? null, tags: input.tags ?? {}, installationId: integrationScope(bot)?.id ?? null,
      timeoutAt: input.timeoutAt !== undefined ? this.parseDate('timeoutAt', input.timeoutAt) : now + DEFAULT_WORKFLOW_TIMEOUT_MS,
      createdAt: now,
    }
  }

  async create(bot: BotRow, input: WorkflowInput): Promise<WorkflowRow> {
    return this.store.workflows.create(await this.newWorkflow(bot, input), this.events)
  }

  /**
   * The newest workflow of that name with the same conversation, user and parent whose tags match
   * (all of them, or those named by discriminateByTags) and, with discriminateByStatusGroup, whose
   * status is active or finished; otherwise a new one.
   */
  async getOrCreate(bot: BotRow, input: WorkflowInput & { discriminateByTags?: string[] | undefined; discriminateByStatusGroup?: 'active' | 'finished' | undefined }): Promise<{ workflow: WorkflowRow; created: boolean }> {
    const workflow = await this.newWorkflow(bot, input)
    const tags = input.discriminateByTags === undefined ? workflow.tags
      : Object.fromEntries(input.discriminateByTags.map((key) => {
        const value = workflow.tags[key]
        if (value === undefined) throw errors.invalidPayload(`discriminateByTags names "${key}", which is not in tags`)
        return [key, value]
      }))
    const match: WorkflowFilter = {
      name: workflow.name, tags,
      ...(workflow.conversationId !== null && { conversationId: workflow.conversationId }),
      ...(workflow.userId !== null && { userId: workflow.userId }),
      ...(workflow.parentWorkflowId !== null && { parentWorkflowId: workflow.parentWorkflowId }),
      ...(workflow.installationId !== null && { installationId: workflow.installationId }),
      ...(input.discriminateByStatusGroup && { statuses: [...(input.discriminateByStatusGroup === 'active' ? ACTIVE_WORKFLOW_STATUSES : FINISHED_WORKFLOW_STATUSES)] }),
    }
    return this.store.workflows.getOrCreate(workflow, match, this.events)
  }

  async get(bot: BotRow, id: string): Promise<WorkflowRow> {
    const workflow = await this.store.workflows.get(bot.id, id)
    if (!workflow) throw errors.notFound('Workflow', id)
    return workflow
  }

  async update(bot: BotRow, id: string, patch: WorkflowUpdate): Promise<WorkflowRow> {
    this.checkTags(patch.tags)
    if (patch.status !== undefined) {
      const current = await this.get(bot, id)
      if (FINISHED_WORKFLOW_STATUSES.includes(current.status) && patch.status !== current.status) {
        throw errors.invalidPayload(`Workflow "${id}" is ${current.status}: a finished workflow's status cannot change`)
      }
    }
    await this.checkRefs(bot, { userId: patch.userId })
    const updated = await this.store.workflows.update(bot.id, id, {
      output: patch.output, status: patch.status, failureReason: patch.failureReason, tags: patch.tags, userId: patch.userId, eventId: patch.eventId,
      ...(patch.timeoutAt !== undefined && { timeoutAt: this.parseDate('timeoutAt', patch.timeoutAt) }),
    }, this.clock(), this.events)
    if (!updated) throw errors.notFound('Workflow', id)
    return updated
  }

  async delete(bot: BotRow, id: string): Promise<void> {
    if (!(await this.store.workflows.delete(bot.id, id, this.events))) throw errors.notFound('Workflow', id)
  }

  /** The bot's workflows; for an integration key, those its installation created (src/domain/installation-scope.ts). */
  list(bot: BotRow, filter: WorkflowFilter, nextToken: string | undefined, pageSize: number | undefined): Promise<Page<WorkflowRow>> {
    const scope = integrationScope(bot)
    return this.store.workflows.list(bot.id, { ...filter, installationId: scope?.id }, { after: nextToken, limit: pageSize ?? WORKFLOW_PAGE_SIZE.default })
  }

  /** Active workflows past their timeoutAt become `timedout` (run by the event dispatcher's sweep). */
  async timeOutDue(): Promise<number> {
    return this.store.workflows.timeOutDue(this.clock(), TIMEOUT_BATCH, this.events)
  }
}
