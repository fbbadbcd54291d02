import type { Static, TObject, TSchema } from 'typebox'
import type { FastifyError } from 'fastify'
import type { ErrorObject } from 'ajv'
import type { BotChatService } from '../../domain/bot-chat-service.js'
import type { InstallationDeclaration } from '../../domain/installation-scope.js'
import type { Permission } from '../../domain/permissions.js'
import { runtimeConversationView, runtimeMessageView, runtimeUserView, type RuntimeConversation, type RuntimeConversationView, type RuntimeMessageView, type RuntimeUserView } from '../../domain/runtime-views.js'
import type { TablesService } from '../../domain/tables-service.js'
import type { BotChatMessage, BotChatUser } from '../../store/bot-chat-store.js'
import type { BotRow, JsonObject } from '../../store/store.js'
import { fromFastifyError } from '../plugins/error-handler.js'
import { compileValidator, type HttpPart } from '../schemas/validators.js'

/**
 * One bot-facing operation, defined once (src/http/operations/index.ts lists them): its @botpress/client name,
 * its route (method, path under the API's prefix, permission, the resources it names for an integration key),
 * its input and output schemas, and the domain call. The route is registered from it (registerOperation) and
 * the sandboxed bot's client calls it through callOperation, validated by the same compiled schemas.
 */
export interface BotOperation<C> {
  /** The client's name of the operation (createUser, findTableRows…). */
  id: string
  api: 'runtime' | 'tables'
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  permission: Permission
  /** Runtime API: the resources the operation names, checked for an integration key (src/domain/installation-scope.ts). */
  installation?: InstallationDeclaration
  summary: string
  params?: TObject
  query?: TObject
  body?: TObject
  /** The 200 response. */
  response: TSchema
  run(ctx: C, input: { params: unknown; query: unknown; body: unknown }): Promise<unknown>
}

interface Definition<C, P extends TObject, Q extends TObject, B extends TObject, R extends TSchema> extends Omit<BotOperation<C>, 'params' | 'query' | 'body' | 'response' | 'run'> {
  params?: P
  query?: Q
  body?: B
  response: R
  run(ctx: C, input: { params: Static<P>; query: Static<Q>; body: Static<B> }): Promise<Static<R>>
}

/** An operation whose domain call sees its validated input typed by its schemas. */
const define = <C>() =>
  <P extends TObject = TObject<{}>, Q extends TObject = TObject<{}>, B extends TObject = TObject<{}>, R extends TSchema = TSchema>(def: Definition<C, P, Q, B, R>): BotOperation<C> =>
    def as unknown as BotOperation<C>

/**
 * How a Runtime operation shows users, messages and conversations: the routes show the Runtime API's objects;
 * the sandboxed client's are supersets of them and of the Chat API's (a user's `profile`, a message's Chat API
 * payload with `type` inside and its `metadata`), docs/bot-code.md "The client".
 */
export interface RuntimeViews {
  user(u: BotChatUser): RuntimeUserView
  message(m: BotChatMessage): RuntimeMessageView
  conversation(c: RuntimeConversation): RuntimeConversationView
}

/** The Runtime API message, with the Chat API's payload (`type` inside) and metadata. */
export function sandboxMessageView(m: BotChatMessage): RuntimeMessageView & { metadata?: JsonObject } {
  return { ...runtimeMessageView(m), payload: m.payload, ...(m.metadata !== null && { metadata: m.metadata }) }
}

/** The Runtime API user, with the Chat API's profile. */
export function sandboxUserView(u: BotChatUser): RuntimeUserView & { profile?: string } {
  return { ...runtimeUserView(u), ...(u.profile !== null && { profile: u.profile }) }
}

export const ROUTE_VIEWS: RuntimeViews = { user: runtimeUserView, message: runtimeMessageView, conversation: runtimeConversationView }
export const SANDBOX_VIEWS: RuntimeViews = { user: sandboxUserView, message: sandboxMessageView, conversation: runtimeConversationView }

/** What a Runtime operation acts with: the bot (x-bot-id, or the sandboxed bot), its chat data, the caller's views. */
export interface RuntimeContext { bot: BotRow; botChat: BotChatService; views: RuntimeViews }
/** What a Tables operation acts with: the bot's id and its tables. */
export interface TablesContext { botId: string; tables: TablesService }

export const runtimeOperation = define<RuntimeContext>()
export const tablesOperation = define<TablesContext>()

/** The keys of an input object a schema declares (what @botpress/client puts in that part of the request). */
function pick(args: Record<string, unknown>, schema: TObject | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (schema) for (const key of Object.keys(schema.properties)) if (args[key] !== undefined) out[key] = args[key]
  return out
}

/**
 * The error a route answers for input its schema refuses: fastify's message (`body/tags must be object`) and
 * src/http/plugins/error-handler.ts's Botpress error (InvalidPayload, or InvalidQuery for the query string).
 */
function validationError(part: HttpPart, errors: ErrorObject[]): Error {
  const message = errors.map((e) => `${part}${e.instancePath} ${e.message}`).join(', ')
  return fromFastifyError(Object.assign(new Error(message), { validation: errors, validationContext: part }) as unknown as FastifyError)!
}

/** `value` as a route's body: refused with the route's error for what its schema refuses. */
export function validatedBody(schema: TObject, value: unknown): unknown {
  const validate = compileValidator('body', schema)
  if (!validate(value)) throw validationError('body', validate.errors ?? [])
  return value
}

/**
 * Calls an operation with a client's flat arguments (`{ id, tags }`), as @botpress/client splits them into the
 * request: path params, query string and body each take the keys their schema declares (others are dropped);
 * each part is validated as the route validates it, in fastify's order (params, body, query string).
 */
export async function callOperation<C>(op: BotOperation<C>, ctx: C, args: Record<string, unknown>): Promise<unknown> {
  const input = { params: pick(args, op.params), query: pick(args, op.query), body: pick(args, op.body) }
  const parts: [HttpPart, TObject | undefined, object][] = [['params', op.params, input.params], ['body', op.body, input.body], ['querystring', op.query, input.query]]
  for (const [part, schema, value] of parts) {
    if (!schema) continue
    const validate = compileValidator(part, schema)
    if (!validate(value)) throw validationError(part, validate.errors ?? [])
  }
  return op.run(ctx, input)
}
