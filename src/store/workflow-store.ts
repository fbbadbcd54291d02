import type { JsonObject, Page, PageRequest } from './rows.js'
import type { NewRuntimeEvent } from './runtime-event-store.js'

/**
 * Runtime API workflows (migrations/<dialect>/0007_runtime_state.sql): stored, listed with the client's filters and
 * updated as the bot says; every change may queue workflow_update events (WorkflowEvents) in the same transaction,
 * which the runtime event queue delivers (src/domain/workflow-engine.ts, docs/workflows.md).
 */
export type WorkflowStatus = 'pending' | 'in_progress' | 'failed' | 'completed' | 'listening' | 'paused' | 'timedout' | 'cancelled'
export const FINISHED_WORKFLOW_STATUSES: readonly WorkflowStatus[] = ['failed', 'completed', 'timedout', 'cancelled']
export const ACTIVE_WORKFLOW_STATUSES: readonly WorkflowStatus[] = ['pending', 'in_progress', 'listening', 'paused']

export interface WorkflowRow {
  id: string
  botId: string
  name: string
  status: WorkflowStatus
  input: JsonObject
  output: JsonObject
  parentWorkflowId: string | null
  conversationId: string | null
  userId: string | null
  eventId: string | null
  /** The integration installation whose API key created it (null: the bot's own); an integration key sees only its own. */
  installationId: string | null
  failureReason: string | null
  tags: Record<string, string>
  timeoutAt: number
  completedAt: number | null
  createdAt: number
  updatedAt: number
}

export type NewWorkflow = Omit<WorkflowRow, 'output' | 'failureReason' | 'completedAt' | 'updatedAt' | 'installationId'> & { installationId?: string | null | undefined }

export interface WorkflowPatch {
  output?: JsonObject | undefined
  timeoutAt?: number | undefined
  status?: WorkflowStatus | undefined
  failureReason?: string | undefined
  /** null removes the tag. */
  tags?: Record<string, string | null> | undefined
  userId?: string | undefined
  eventId?: string | undefined
}

export interface WorkflowFilter {
  tags?: Record<string, string> | undefined
  conversationId?: string | undefined
  userId?: string | undefined
  parentWorkflowId?: string | undefined
  statuses?: WorkflowStatus[] | undefined
  name?: string | undefined
  /** Only the workflows created by that installation's key. */
  installationId?: string | undefined
}

/**
 * The events a change queues, given the workflow before (undefined: created) and after (undefined: deleted); inserted
 * in the transaction that makes the change, so a change and its events are kept or lost together.
 */
export type WorkflowEvents = (before: WorkflowRow | undefined, after: WorkflowRow | undefined) => NewRuntimeEvent[]

export interface WorkflowStore {
  create(workflow: NewWorkflow, events?: WorkflowEvents): Promise<WorkflowRow>
  /**
   * The newest workflow matching `match` (name, conversation, user, parent, the given tags and, with
   * statuses, one of them), or a new one created from `workflow`; atomic (one winner per match).
   */
  getOrCreate(workflow: NewWorkflow, match: WorkflowFilter, events?: WorkflowEvents): Promise<{ workflow: WorkflowRow; created: boolean }>
  get(botId: string, id: string): Promise<WorkflowRow | undefined>
  update(botId: string, id: string, patch: WorkflowPatch, now: number, events?: WorkflowEvents): Promise<WorkflowRow | undefined>
  delete(botId: string, id: string, events?: WorkflowEvents): Promise<boolean>
  /** Active workflows whose timeoutAt has passed become `timedout` (completedAt now), one instance each; how many. */
  timeOutDue(now: number, limit: number, events?: WorkflowEvents): Promise<number>
  /** Newest first. */
  list(botId: string, filter: WorkflowFilter, page: PageRequest): Promise<Page<WorkflowRow>>
}
