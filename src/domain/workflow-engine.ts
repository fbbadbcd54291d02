import { uuidv7 } from '../lib/ids.js'
import type { NewRuntimeEvent, RuntimeEventRow } from '../store/runtime-event-store.js'
import type { JsonObject, Store } from '../store/store.js'
import { FINISHED_WORKFLOW_STATUSES, type WorkflowEvents, type WorkflowRow } from '../store/workflow-store.js'
import { runtimeConversationView, runtimeUserView } from './runtime-views.js'
import { workflowView } from './runtime-workflow-service.js'

/**
 * Runs the Runtime API's workflows as @botpress/sdk expects (docs/workflows.md): every change of a workflow queues
 * the `workflow_update` events it implies (WorkflowEvents, in the change's own transaction), the runtime event queue
 * claims and delivers them once across instances (src/domain/runtime-event-service.ts), and what a delivery left
 * decides the next one. The SDK's update handler reads `payload.type`:
 * - `workflow_started`: a workflow created `pending`. The bot acknowledges it (`in_progress`, the SDK's
 *   acknowledgeStartOfProcessing) or finishes it; left `pending`, it is started again up to MAX_RETRIES times, then `failed`.
 * - `workflow_continued`: a workflow the bot left `in_progress` after its handler answered (the SDK's handlers do a
 *   slice of work per update), and one the bot moved from `listening` or `paused` back to `in_progress`. The wait
 *   before the next one is continueMs, doubled after each continuation in a row during which the bot did not update
 *   the workflow (an idle one), at most maxContinueMs; back to continueMs once it updates it.
 * - `workflow_timedout`: `timeoutAt` passed while it was active (it is `timedout` already).
 * - `child_workflow_finished` / `child_workflow_deleted`: to the parent of a workflow that finished or was deleted.
 * Only bots with a `url` get them; a sandboxed bot module has no workflow handlers, so its events are `ignored`.
 */
export const WORKFLOW_UPDATE = 'workflow_update'
export type WorkflowUpdateType = 'workflow_started' | 'workflow_continued' | 'workflow_timedout' | 'child_workflow_finished' | 'child_workflow_deleted'
const UPDATE_TYPES: readonly string[] = ['workflow_started', 'workflow_continued', 'workflow_timedout', 'child_workflow_finished', 'child_workflow_deleted']
/** Times a started or continued update is sent again (left pending, or not delivered) before the workflow is `failed`. */
export const MAX_RETRIES = 3

/** What goes to the bot for a claimed workflow_update row, or why nothing does. */
export type PreparedUpdate =
  | { deliver: true; payload: JsonObject; userId: string | null; conversationId: string | null }
  | { deliver: false; reason: string }

export class WorkflowEngine {
  private readonly clock: () => number

  constructor(private readonly store: Store, private readonly options: { continueMs: number; maxContinueMs: number; clock?: () => number }) {
    this.clock = options.clock ?? Date.now
  }

  /** A workflow_update row of `workflow` (stored payload: the update type and what delivery cannot read again). */
  private update(workflow: Pick<WorkflowRow, 'id' | 'botId' | 'userId' | 'installationId'>, type: WorkflowUpdateType, extra: JsonObject = {}, delayMs = 0): NewRuntimeEvent {
    const now = this.clock()
    return {
      id: uuidv7(), botId: workflow.botId, type: WORKFLOW_UPDATE, payload: { type, ...extra }, workflowId: workflow.id, userId: workflow.userId,
      installationId: workflow.installationId, status: delayMs > 0 ? 'scheduled' : 'pending', dueAt: now + delayMs, createdAt: now,
    }
  }

  /** The events a change implies (given to the workflow store, which queues them in the change's transaction). */
  readonly events: WorkflowEvents = (before, after) => {
    const out: NewRuntimeEvent[] = []
    const finished = (w: WorkflowRow | undefined) => w !== undefined && FINISHED_WORKFLOW_STATUSES.includes(w.status)
    if (!before && after?.status === 'pending') out.push(this.update(after, 'workflow_started'))
    if (before && after) {
      if (after.status === 'timedout' && before.status !== 'timedout') out.push(this.update(after, 'workflow_timedout'))
      if ((before.status === 'listening' || before.status === 'paused') && after.status === 'in_progress') out.push(this.update(after, 'workflow_continued'))
    }
    const parent = (after ?? before)?.parentWorkflowId
    if (parent && after && finished(after) && !finished(before)) {
      out.push(this.update({ ...after, id: parent }, 'child_workflow_finished', { childWorkflow: workflowView(after) as unknown as JsonObject }))
    }
    if (parent && before && !after) out.push(this.update({ ...before, id: parent }, 'child_workflow_deleted', { childWorkflow: workflowView(before) as unknown as JsonObject }))
    return out
  }

  /** Whether a claimed runtime event is one of the engine's updates. */
  handles(row: RuntimeEventRow): boolean {
    return row.type === WORKFLOW_UPDATE && row.workflowId !== null && UPDATE_TYPES.includes(String(row.payload.type))
  }

  /** The event payload the SDK reads, built when it goes out (the workflow as it is now, its conversation and user). */
  async prepare(row: RuntimeEventRow): Promise<PreparedUpdate> {
    const bot = await this.store.getBot(row.botId)
    if (!bot) return { deliver: false, reason: 'The bot no longer exists' }
    if (bot.url === null) return { deliver: false, reason: "Workflow updates go to bots served elsewhere (a url); this bot's code runs in Parley's sandbox, which has no workflow handlers" }
    const workflow = await this.store.workflows.get(row.botId, row.workflowId!)
    if (!workflow) return { deliver: false, reason: `Workflow "${row.workflowId}" no longer exists` }
    const type = String(row.payload.type) as WorkflowUpdateType
    if (type.startsWith('child_') && FINISHED_WORKFLOW_STATUSES.includes(workflow.status)) return { deliver: false, reason: `The parent workflow is ${workflow.status}` }
    if ((type === 'workflow_started' && workflow.status !== 'pending') || (type === 'workflow_continued' && workflow.status !== 'in_progress')) {
      return { deliver: false, reason: `The workflow is ${workflow.status}` }
    }
    const integrations = await this.store.listIntegrations(bot.id)
    const ids = integrations.map((i) => i.id)
    const conversation = workflow.conversationId === null ? undefined : await this.store.botChat.getConversation(ids, workflow.conversationId)
    const user = workflow.userId === null ? undefined : await this.store.botChat.getUser(ids, workflow.userId)
    const integrationName = integrations.find((i) => i.id === conversation?.integrationId)?.name ?? 'chat'
    return {
      deliver: true,
      userId: workflow.userId,
      conversationId: workflow.conversationId,
      payload: {
        type,
        workflow: workflowView(workflow) as unknown as JsonObject,
        ...(row.payload.childWorkflow !== undefined && { childWorkflow: row.payload.childWorkflow }),
        ...(conversation && { conversation: runtimeConversationView({ ...conversation, integrationName }) as unknown as JsonObject }),
        ...(user && { user: runtimeUserView(user) as unknown as JsonObject }),
      },
    }
  }

  /**
   * What follows a delivered started or continued update: the workflow left `pending` is started again, one left
   * `in_progress` is continued (after continueMs); a delivery that failed is made again; after MAX_RETRIES the
   * workflow is `failed` with the reason. Queued by the caller in the transaction that ends `row`.
   */
  async next(row: RuntimeEventRow, outcome: { status: 'processed' | 'failed' | 'ignored'; reason?: string }): Promise<NewRuntimeEvent[]> {
    const type = String(row.payload.type)
    if (outcome.status === 'ignored' || (type !== 'workflow_started' && type !== 'workflow_continued')) return []
    const workflow = await this.store.workflows.get(row.botId, row.workflowId!)
    if (!workflow) return []
    const attempt = typeof row.payload.attempt === 'number' ? row.payload.attempt : 0
    const stuck = workflow.status === 'pending' || (outcome.status === 'failed' && workflow.status === 'in_progress')
    if (stuck) {
      if (attempt < MAX_RETRIES) return [this.update(workflow, workflow.status === 'pending' ? 'workflow_started' : 'workflow_continued', { attempt: attempt + 1 }, this.options.continueMs)]
      const reason = outcome.status === 'failed'
        ? `The bot did not handle its ${type} update ${MAX_RETRIES + 1} times: ${outcome.reason ?? 'failed'}`
        : `The bot did not acknowledge the workflow's start after ${MAX_RETRIES + 1} workflow_started updates`
      await this.store.workflows.update(row.botId, workflow.id, { status: 'failed', failureReason: reason.slice(0, 1000) }, this.clock(), this.events)
      return []
    }
    if (workflow.status !== 'in_progress' || (await this.waiting(workflow, row.id))) return []
    // Idle: the workflow as it was when this continuation was queued (the bot did not update it meanwhile).
    const idle = type === 'workflow_continued' && row.payload.workflowUpdatedAt === workflow.updatedAt
    const quiet = idle && typeof row.payload.quiet === 'number' ? row.payload.quiet + 1 : 0
    return [this.update(workflow, 'workflow_continued', { workflowUpdatedAt: workflow.updatedAt, quiet }, this.continueAfter(quiet))]
  }

  /** The wait before a continuation after `quiet` idle ones in a row: continueMs doubled each time, at most maxContinueMs. */
  continueAfter(quiet: number): number {
    const { continueMs, maxContinueMs } = this.options
    return Math.min(Math.max(continueMs, maxContinueMs), continueMs * 2 ** Math.min(quiet, 40))
  }

  /** Whether another update of this workflow is queued already (the bot resumed it meanwhile, say). */
  private async waiting(workflow: WorkflowRow, except: string): Promise<boolean> {
    for (const status of ['pending', 'scheduled'] as const) {
      const page = await this.store.runtimeEvents.list(workflow.botId, { type: WORKFLOW_UPDATE, workflowId: workflow.id, status }, { limit: 2 })
      if (page.items.some((e) => e.id !== except)) return true
    }
    return false
  }
}
