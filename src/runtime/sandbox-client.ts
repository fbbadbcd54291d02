/**
 * The sandboxed bot's client (docs/bot-code.md, "The client"): its Runtime API operations are the table's
 * (src/http/operations), called with the routes' validation and errors and the sandbox's views (objects that
 * are supersets of the Chat API's and the Runtime API's). What needs the turn's context is the host's
 * (src/runtime/bot-runtime.ts; HOST_OWNED_METHODS lists it).
 */
import { errors } from '../lib/errors.js'
import type { BotChatService } from '../domain/bot-chat-service.js'
import { RUNTIME_OPERATIONS } from '../http/operations/index.js'
import { callOperation, SANDBOX_VIEWS, type BotOperation } from '../http/operations/operation.js'
import type { Tags } from '../store/bot-chat-store.js'
import type { BotRow } from '../store/store.js'

export { sandboxMessageView, sandboxUserView } from '../http/operations/operation.js'

/** A `tags` argument of the host's createMessage: undefined or a map of strings (400 otherwise; bounds are the domain's). */
export function optionalTags(value: unknown): Tags | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw errors.invalidPayload('tags must be an object of strings')
  for (const v of Object.values(value)) if (typeof v !== 'string') throw errors.invalidPayload('tags must be an object of strings')
  return value as Tags
}

/** The operations of a list by name. */
export const byName = <C>(ops: BotOperation<C>[]): Map<string, BotOperation<C>> => new Map(ops.map((op) => [op.id, op]))

const RUNTIME = byName(RUNTIME_OPERATIONS)

/** A Runtime operation of the sandboxed client, or undefined for any other method (the host's own). */
export function sandboxRuntimeCall(domain: BotChatService, bot: BotRow, method: string, a: Record<string, unknown>): Promise<unknown> | undefined {
  const op = RUNTIME.get(method)
  return op && callOperation(op, { bot, botChat: domain, views: SANDBOX_VIEWS }, a)
}
