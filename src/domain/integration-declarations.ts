import AjvModule from 'ajv'
import { errors } from '../lib/errors.js'
import type { BotRow, IntegrationRow, JsonObject } from '../store/store.js'
import { integrationScope } from './bot-chat-service.js'
import type { Installation, IntegrationService } from './integration-service.js'
import type { StateDefinition } from './runtime-state-service.js'
import type { CreateEventInput } from './runtime-event-service.js'

type AjvClass = typeof import('ajv').default
const Ajv = ((AjvModule as unknown as { default?: AjvClass }).default ?? AjvModule) as AjvClass
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What the operations need of a definition: the stored JSON as createIntegration took it. */
export const definitionOf = (install: Installation) => install.definition.definition as Record<string, unknown>

/**
 * What an installed integration's definition declares, read for the Runtime API: the schemas of its actions and
 * events (compiled once per definition version), its `states`, and createEvent by the integration (its declared
 * events only, typed `alias:event`). Needs only the definitions (IntegrationService), so the state and event
 * services get it when they are built (src/compose.ts); IntegrationOperations checks actions with it.
 */
export class IntegrationDeclarations {
  private readonly ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false })
  /** Compiled action/event schemas, per definition version and place. */
  private readonly validators = new Map<string, (value: unknown) => string | undefined>()

  constructor(private readonly service: IntegrationService) {}

  /** A validator of `schema` (cached per definition version and place); undefined when the definition has none. */
  validator(install: Installation, where: string, schema: unknown): ((value: unknown) => string | undefined) | undefined {
    if (!isObject(schema)) return undefined
    const key = `${install.definition.id}:${install.definition.updatedAt}:${where}`
    let check = this.validators.get(key)
    if (!check) {
      let validate: ReturnType<typeof this.ajv.compile> | undefined
      try {
        const { $schema: _ignored, ...rest } = schema
        validate = this.ajv.compile(rest)
      } catch {
        validate = undefined
      }
      check = (value) => {
        if (!validate || validate(value)) return undefined
        const e = validate.errors?.[0]
        return `${e?.instancePath.replaceAll('/', '.') ?? ''} ${e?.message ?? 'does not match the schema'}`.trim()
      }
      if (this.validators.size > 1000) this.validators.clear()
      this.validators.set(key, check)
    }
    return check
  }

  /**
   * createEvent by the integration (its key): `type` must be an event of its definition (`name` or
   * `alias:name`), its payload must match the event's schema; the bot sees it as `alias:name`.
   * Bots' own createEvent is left as it is.
   */
  async eventInput(bot: BotRow, input: CreateEventInput): Promise<CreateEventInput> {
    const scope = integrationScope(bot)
    if (!scope) return input
    const install = await this.service.installation(scope)
    if (!install) throw errors.forbidden('This integration is not installed in this bot')
    // The conversation, user, message and workflow it names were checked to be its installation's (src/domain/installation-scope.ts).
    const name = input.type.startsWith(`${scope.name}:`) ? input.type.slice(scope.name.length + 1) : input.type
    const events = (definitionOf(install).events ?? {}) as Record<string, { schema?: unknown }>
    if (!Object.hasOwn(events, name)) {
      throw errors.invalidPayload(`Event type "${input.type.slice(0, 200)}" is not an event of integration "${install.definition.name}" (its events: ${Object.keys(events).join(', ') || 'none'})`)
    }
    const problem = this.validator(install, `event:${name}`, events[name]?.schema)?.(input.payload)
    if (problem) throw errors.invalidPayload(`payload of event "${name}" does not match its schema: payload${problem.startsWith('.') ? '' : ' '}${problem}`)
    return { ...input, type: `${scope.name}:${name}` }
  }

  /**
   * The integration's own state declarations (its definition's `states`), for the Runtime API's state
   * operations called with its key: `key` identifies the declarations' version (compiled once), and
   * names are stored apart from the bot's (`prefix`), so an integration and its bot never share one.
   */
  async stateDeclarations(bot: BotRow): Promise<{ key: string; prefix: string; scope: IntegrationRow; definitions: Record<string, StateDefinition> } | undefined> {
    const scope = integrationScope(bot)
    if (!scope) return undefined
    const install = await this.service.installation(scope)
    if (!install) throw errors.forbidden('This integration is not installed in this bot')
    const states = (definitionOf(install).states ?? {}) as Record<string, { type?: unknown; schema?: unknown }>
    const definitions: Record<string, StateDefinition> = {}
    for (const [name, s] of Object.entries(states)) {
      if (isObject(s) && typeof s.type === 'string' && isObject(s.schema)) definitions[name] = { type: s.type as StateDefinition['type'], schema: s.schema as JsonObject }
    }
    return { key: `integration:${install.definition.id}:${install.definition.updatedAt}`, prefix: `integration:${scope.id}:`, scope, definitions }
  }
}
