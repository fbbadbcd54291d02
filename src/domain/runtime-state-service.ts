import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { errors } from '../lib/errors.js'
import { compileLinearRegex } from '../lib/linear-regex.js'
import { uuidv7 } from '../lib/ids.js'
import type { NewRuntimeEvent } from '../store/runtime-event-store.js'
import type { RuntimeStateRow, StateKey, StateType } from '../store/state-store.js'
import type { BotRow, JsonObject, Store } from '../store/store.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
/** Schema `pattern`s and `patternProperties` run on RE2 (linear time), never on JavaScript's backtracking RegExp. */
const linearRegExp = Object.assign((source: string) => compileLinearRegex(source), { code: 'compileLinearRegex' })

export const STATE_TYPES: readonly StateType[] = ['conversation', 'user', 'bot', 'integration', 'workflow']
/** A state's payload, serialized (Botpress's own bound is of this order). */
export const MAX_STATE_PAYLOAD_BYTES = 128 * 1024
/** Bounds of a bot's state declarations: a hostile definition cannot take the server down. */
export const MAX_STATE_DEFINITIONS = 100
export const MAX_STATE_SCHEMA_BYTES = 64 * 1024
export const MAX_STATE_SCHEMA_DEPTH = 32
/** Expiries from 1 s to 1 year (ms). */
export const MIN_STATE_EXPIRY_MS = 1_000
export const MAX_STATE_EXPIRY_MS = 365 * 24 * 3600 * 1000
const MAX_NAME_LENGTH = 100
/** Compiled declarations of this many bot versions stay cached. */
const CACHE_SIZE = 500
/** State-expired events the sweep queues per round. */
const EXPIRE_BATCH = 100

export interface StateDefinition { type: StateType; schema: JsonObject; expiry?: number }

/**
 * An integration's state declarations when `bot` is seen through its installation (its API key):
 * `key` versions them (compiled once), `prefix` keeps its states apart from the bot's, `scope` is the
 * installation (type `integration` states hang on it). undefined for the bot itself.
 */
export type IntegrationStates = (bot: BotRow) => Promise<{ key: string; prefix: string; scope: { id: string; name: string }; definitions: Record<string, StateDefinition> } | undefined>

/** The state object of the Runtime API (@botpress/client's State). */
export function stateView(s: RuntimeStateRow) {
  return {
    id: s.id,
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(s.updatedAt).toISOString(),
    botId: s.botId,
    ...(s.type === 'conversation' && { conversationId: s.resourceId }),
    ...(s.type === 'user' && { userId: s.resourceId }),
    name: s.name,
    type: s.type,
    payload: s.payload,
    ...(s.expiry !== null && { expiry: s.expiry }),
    ...(s.expiresAt !== null && { expiresAt: new Date(s.expiresAt).toISOString() }),
  }
}

export type StateView = ReturnType<typeof stateView>

/** The event raised when a state expires: type `state_expired`, payload `{ state }` (what @botpress/sdk hands to its stateExpired handlers). */
export function stateExpiredEvent(state: RuntimeStateRow, now: number): NewRuntimeEvent {
  return {
    id: uuidv7(), botId: state.botId, type: 'state_expired', payload: { state: stateView(state) as unknown as JsonObject },
    ...(state.type === 'conversation' && { conversationId: state.resourceId }),
    ...(state.type === 'user' && { userId: state.resourceId }),
    ...(state.type === 'workflow' && { workflowId: state.resourceId }),
    status: 'pending', dueAt: now, createdAt: now,
  }
}

function depthOf(root: unknown): number {
  let max = 0
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (typeof value !== 'object' || value === null) continue
    max = Math.max(max, depth)
    if (max > MAX_STATE_SCHEMA_DEPTH) return max
    for (const child of Object.values(value)) stack.push([child, depth + 1])
  }
  return max
}

/** Regular expressions of a schema (`pattern` values, `patternProperties` keys): each must compile and be free of catastrophic backtracking. */
function checkPatterns(name: string, schema: unknown): void {
  const stack: unknown[] = [schema]
  const check = (source: unknown) => {
    if (typeof source !== 'string') return
    try {
      compileLinearRegex(source)
    } catch (err) {
      throw errors.invalidPayload(`states.${name}.schema has a pattern ${JSON.stringify(source.slice(0, 100))} that is refused: ${(err as Error).message}`)
    }
  }
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value !== 'object' || value === null) continue
    const record = value as Record<string, unknown>
    check(record.pattern)
    if (typeof record.patternProperties === 'object' && record.patternProperties !== null) for (const key of Object.keys(record.patternProperties)) check(key)
    for (const child of Object.values(record)) stack.push(child)
  }
}

function newAjv(): Ajv {
  // A fresh instance per bot version: one bot's `$id`s never meet another's; no remote `$ref` is loaded.
  const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true, addUsedSchema: false, code: { regExp: linearRegExp } })
  addFormats(ajv)
  return ajv
}

/** Compiles one declared schema, or a 400 saying why it cannot be used. */
function compile(ajv: Ajv, name: string, schema: JsonObject): ValidateFunction {
  // zod-to-json-schema and the SDK write `$schema` (draft-07 or later): the validator is Ajv's draft-07 either way.
  const { $schema: _ignored, ...rest } = schema
  try {
    return ajv.compile(rest)
  } catch (err) {
    throw errors.invalidPayload(`states.${name}.schema is not a usable JSON Schema: ${(err as Error).message.slice(0, 300)}`)
  }
}

/** A bot's workflow state that its definition does not declare (the CLI never sends them): any object. */
const UNDECLARED_WORKFLOW_STATE: StateDefinition = { type: 'workflow', schema: { type: 'object' } }

/** Validates one declaration as sent in createBot/updateBot `states`. */
function checkDefinition(ajv: Ajv, name: string, value: unknown): StateDefinition {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) throw errors.invalidPayload(`State names must be 1 to ${MAX_NAME_LENGTH} characters`)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw errors.invalidPayload(`states.${name} must be an object { type, schema, expiry? } or null`)
  const { type, schema, expiry } = value as Record<string, unknown>
  if (typeof type !== 'string' || !(STATE_TYPES as readonly string[]).includes(type)) throw errors.invalidPayload(`states.${name}.type must be one of ${STATE_TYPES.join(', ')}`)
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw errors.invalidPayload(`states.${name}.schema must be a JSON Schema object`)
  if (JSON.stringify(schema).length > MAX_STATE_SCHEMA_BYTES) throw errors.invalidPayload(`states.${name}.schema is larger than ${MAX_STATE_SCHEMA_BYTES} bytes`)
  if (depthOf(schema) > MAX_STATE_SCHEMA_DEPTH) throw errors.invalidPayload(`states.${name}.schema is nested deeper than ${MAX_STATE_SCHEMA_DEPTH} levels`)
  if (expiry !== undefined && expiry !== null && (typeof expiry !== 'number' || !Number.isInteger(expiry) || expiry < MIN_STATE_EXPIRY_MS || expiry > MAX_STATE_EXPIRY_MS)) {
    throw errors.invalidPayload(`states.${name}.expiry must be an integer number of milliseconds from ${MIN_STATE_EXPIRY_MS} to ${MAX_STATE_EXPIRY_MS}`)
  }
  checkPatterns(name, schema)
  compile(ajv, name, schema as JsonObject)
  return { type: type as StateType, schema: schema as JsonObject, ...(typeof expiry === 'number' && { expiry }) }
}

interface Compiled { version: number; definitions: Record<string, StateDefinition>; validators: Map<string, ValidateFunction> }

/**
 * States of the Runtime API (getState, setState, getOrSetState, patchState, setStateExpiry) and the
 * bot definition's `states` declarations they are checked against. A state's name must be declared
 * (for the route's type), its payload must satisfy the declared JSON Schema (compiled once per
 * declarations version), and the resource it hangs on must be the bot's own (another bot's
 * conversation or user is 404). Expired states are removed by the event dispatcher's sweep
 * (RuntimeEventService), which queues their state_expired events.
 */
export class RuntimeStateService {
  private readonly clock: () => number
  private readonly compiled = new Map<string, Compiled>()

  /** `integrationStates`: an installed integration calling with its own key has its definition's declarations (IntegrationDeclarations). */
  constructor(private readonly store: Store, options: { clock?: () => number; integrationStates?: IntegrationStates } = {}) {
    this.clock = options.clock ?? Date.now
    this.integrationStates = options.integrationStates
  }

  private readonly integrationStates: IntegrationStates | undefined

  /** An integration's declarations, or undefined for the bot's own (BotRow without an integration scope). */
  private async scopeOf(bot: BotRow): Promise<Awaited<ReturnType<IntegrationStates>>> {
    return this.integrationStates?.(bot)
  }

  /** The state as the caller named it: an integration's own are stored under its prefix (apart from the bot's). */
  private named(view: StateView, prefix: string | undefined): StateView {
    return prefix && view.name.startsWith(prefix) ? { ...view, name: view.name.slice(prefix.length) } : view
  }

  // ---- declarations (the bot definition's `states`) ----

  /**
   * Applies createBot/updateBot's `states` to the bot's declarations (null removes one) after
   * checking each (type, schema, expiry); nothing is stored when one is refused.
   */
  async declare(botId: string, input: Record<string, unknown>): Promise<void> {
    const current = (await this.store.states.getDefinitions(botId))?.definitions ?? {}
    const next = this.merge(current, input)
    await this.store.states.setDefinitions(botId, next as JsonObject, this.clock())
  }

  /** Checks declarations without storing them (createBot checks before the bot exists). */
  check(input: Record<string, unknown>): void {
    this.merge({}, input)
  }

  private merge(current: Record<string, unknown>, input: Record<string, unknown>): Record<string, unknown> {
    const next: Record<string, unknown> = { ...current }
    const ajv = newAjv()
    for (const [name, value] of Object.entries(input)) {
      if (value === null) delete next[name]
      else next[name] = checkDefinition(ajv, name, value)
    }
    if (Object.keys(next).length > MAX_STATE_DEFINITIONS) throw errors.invalidPayload(`A bot declares at most ${MAX_STATE_DEFINITIONS} states`)
    return next
  }

  /** The bot's declarations as getBot shows them. */
  async definitions(botId: string): Promise<Record<string, StateDefinition>> {
    return ((await this.store.states.getDefinitions(botId))?.definitions ?? {}) as unknown as Record<string, StateDefinition>
  }

  private async compiledOf(botId: string): Promise<Compiled> {
    const row = await this.store.states.getDefinitions(botId)
    const version = row?.version ?? 0
    const cached = this.compiled.get(botId)
    if (cached && cached.version === version) return cached
    const definitions = (row?.definitions ?? {}) as unknown as Record<string, StateDefinition>
    const compiled: Compiled = { version, definitions, validators: new Map() }
    this.compiled.delete(botId)
    if (this.compiled.size >= CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!)
    this.compiled.set(botId, compiled)
    return compiled
  }

  private compiledIntegration(key: string, definitions: Record<string, StateDefinition>): Compiled {
    const cached = this.compiled.get(key)
    if (cached) return cached
    const compiled: Compiled = { version: 0, definitions, validators: new Map() }
    if (this.compiled.size >= CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!)
    this.compiled.set(key, compiled)
    return compiled
  }

  /** The declaration of `name` for `type`, or a 400 saying what is wrong. */
  private async declaration(bot: BotRow, type: StateType, name: string): Promise<{ definition: StateDefinition; validate: ValidateFunction; compiled: Compiled }> {
    const integration = await this.scopeOf(bot)
    const compiled = integration ? this.compiledIntegration(integration.key, integration.definitions) : await this.compiledOf(bot.id)
    let definition = Object.hasOwn(compiled.definitions, name) ? compiled.definitions[name] : undefined
    // The CLI strips `type: 'workflow'` states from the definition it sends (packages/cli/src/api/bot-body.ts), so the
    // bot's own workflow states need no declaration: any JSON object, on a workflow of the bot (key() checks it).
    if (!definition && !integration && type === 'workflow') definition = UNDECLARED_WORKFLOW_STATE
    if (!definition && integration) throw errors.invalidPayload(`State "${name}" is not declared in the integration's definition (its \`states\`)`)
    if (!definition) throw errors.invalidPayload(`State "${name}" is not declared in the bot definition (updateBot({ states: { ${JSON.stringify(name)}: { type, schema } } }))`)
    if (definition.type !== type) throw errors.invalidPayload(`State "${name}" is declared for type "${definition.type}", not "${type}"`)
    let validate = compiled.validators.get(name)
    if (!validate) {
      validate = compile(newAjv(), name, definition.schema)
      compiled.validators.set(name, validate)
    }
    return { definition, validate, compiled }
  }

  private checkPayload(name: string, validate: ValidateFunction, payload: JsonObject): void {
    if (JSON.stringify(payload).length > MAX_STATE_PAYLOAD_BYTES) throw errors.invalidPayload(`The payload of state "${name}" exceeds ${MAX_STATE_PAYLOAD_BYTES} bytes`)
    if (validate(payload)) return
    const e = validate.errors?.[0]
    throw errors.invalidPayload(`The payload does not match the schema of state "${name}": payload${e?.instancePath ?? ''} ${e?.message ?? 'is invalid'}`)
  }

  private checkExpiry(expiry: unknown): number | null | undefined {
    if (expiry === undefined || expiry === null) return expiry
    if (typeof expiry !== 'number' || !Number.isInteger(expiry) || expiry < MIN_STATE_EXPIRY_MS || expiry > MAX_STATE_EXPIRY_MS) {
      throw errors.invalidPayload(`expiry must be null or an integer number of milliseconds from ${MIN_STATE_EXPIRY_MS} to ${MAX_STATE_EXPIRY_MS}`)
    }
    return expiry
  }

  /**
   * The resource a state hangs on must be the bot's: anything else answers 404, as if it did not
   * exist. Returns its canonical id (an integration named by its name is keyed by its id).
   */
  private async assertResource(bot: BotRow, type: StateType, id: string): Promise<string> {
    const missing = () => errors.notFound(type === 'bot' ? 'Bot' : `${type[0]!.toUpperCase()}${type.slice(1)}`, id)
    switch (type) {
      case 'bot':
        if (id !== bot.id) throw missing()
        return id
      case 'integration': {
        const integration = (await this.store.listIntegrations(bot.id)).find((i) => i.id === id || i.name === id)
        if (!integration) throw missing()
        return integration.id
      }
      case 'workflow':
        if (!(await this.store.workflows.get(bot.id, id))) throw missing()
        return id
      case 'conversation':
      case 'user':
        for (const integration of await this.store.listIntegrations(bot.id)) {
          const found = type === 'conversation' ? await this.store.getConversation(integration.id, id) : await this.store.getUser(integration.id, id)
          if (found) return id
        }
        throw missing()
    }
  }

  private async key(bot: BotRow, type: StateType, id: string, name: string): Promise<StateKey> {
    const integration = await this.scopeOf(bot)
    if (!integration) return { botId: bot.id, type, resourceId: await this.assertResource(bot, type, id), name }
    // An integration's states: type `integration` hangs on its installation (named by the definition id the SDK
    // sends as ctx.integrationId, the alias or the installation's id); the others on its own conversations and users.
    let resourceId: string
    if (type === 'integration') {
      const definitionId = integration.key.split(':')[1]
      if (id !== integration.scope.id && id !== integration.scope.name && id !== definitionId) throw errors.notFound('Integration', id)
      resourceId = integration.scope.id
    } else if (type === 'conversation' || type === 'user') {
      // Its own installation's conversations and users only (the bot's others: 404, as everywhere for its key).
      const found = type === 'conversation' ? await this.store.getConversation(integration.scope.id, id) : await this.store.getUser(integration.scope.id, id)
      if (!found) throw errors.notFound(type === 'conversation' ? 'Conversation' : 'User', id)
      resourceId = id
    } else {
      resourceId = await this.assertResource(bot, type, id)
    }
    return { botId: bot.id, type, resourceId, name: `${integration.prefix}${name}` }
  }

  private async prefixOf(bot: BotRow): Promise<string | undefined> {
    return (await this.scopeOf(bot))?.prefix
  }

  private readonly expired = (state: RuntimeStateRow) => stateExpiredEvent(state, this.clock())

  async getState(bot: BotRow, type: StateType, id: string, name: string): Promise<StateView> {
    await this.declaration(bot, type, name)
    const state = await this.store.states.get(await this.key(bot, type, id, name), this.clock())
    if (!state) throw errors.notFound('State', name)
    return this.named(stateView(state), await this.prefixOf(bot))
  }

  /** setState; a null payload deletes the state (then answered as it was, with an empty payload). */
  async setState(bot: BotRow, type: StateType, id: string, name: string, payload: JsonObject | null, expiry: unknown): Promise<StateView> {
    const { definition, validate } = await this.declaration(bot, type, name)
    const checkedExpiry = this.checkExpiry(expiry)
    const key = await this.key(bot, type, id, name)
    const now = this.clock()
    if (payload === null) {
      const existing = await this.store.states.get(key, now)
      await this.store.states.delete(key, now, this.expired)
      return this.named(stateView(existing ?? { ...key, id: uuidv7(), payload: {}, expiry: null, expiresAt: null, createdAt: now, updatedAt: now }), await this.prefixOf(bot))
    }
    this.checkPayload(name, validate, payload)
    const written = await this.store.states.write(key, { mode: 'set', id: uuidv7(), payload, expiry: checkedExpiry, defaultExpiry: definition.expiry ?? null, now }, this.expired)
    return this.named(stateView(written!.state), await this.prefixOf(bot))
  }

  async getOrSetState(bot: BotRow, type: StateType, id: string, name: string, payload: JsonObject, expiry: unknown): Promise<StateView> {
    const { definition, validate } = await this.declaration(bot, type, name)
    const checkedExpiry = this.checkExpiry(expiry)
    const key = await this.key(bot, type, id, name)
    this.checkPayload(name, validate, payload)
    const written = await this.store.states.write(key, { mode: 'getOrSet', id: uuidv7(), payload, expiry: checkedExpiry, defaultExpiry: definition.expiry ?? null, now: this.clock() }, this.expired)
    return this.named(stateView(written!.state), await this.prefixOf(bot))
  }

  /** Merges the payload's top-level keys into the state's; the merged payload must satisfy the schema. */
  async patchState(bot: BotRow, type: StateType, id: string, name: string, payload: JsonObject, expiry: unknown): Promise<StateView> {
    const { definition, validate } = await this.declaration(bot, type, name)
    const checkedExpiry = this.checkExpiry(expiry)
    const key = await this.key(bot, type, id, name)
    const now = this.clock()
    const current = await this.store.states.get(key, now)
    if (!current) throw errors.notFound('State', name)
    this.checkPayload(name, validate, { ...current.payload, ...payload })
    const written = await this.store.states.write(key, { mode: 'patch', id: uuidv7(), payload, expiry: checkedExpiry, defaultExpiry: definition.expiry ?? null, now }, this.expired)
    if (!written) throw errors.notFound('State', name)
    return this.named(stateView(written.state), await this.prefixOf(bot))
  }

  async setStateExpiry(bot: BotRow, type: StateType, id: string, name: string, expiry: unknown): Promise<StateView> {
    await this.declaration(bot, type, name)
    const checked = this.checkExpiry(expiry)
    const key = await this.key(bot, type, id, name)
    const state = await this.store.states.setExpiry(key, checked ?? null, this.clock())
    if (!state) throw errors.notFound('State', name)
    return this.named(stateView(state), await this.prefixOf(bot))
  }

  /** Removes states expired by now and queues their state_expired events; how many (the dispatcher sweeps until none is left). */
  async expireDue(): Promise<number> {
    return (await this.store.states.expireDue(this.clock(), EXPIRE_BATCH, this.expired)).length
  }
}
