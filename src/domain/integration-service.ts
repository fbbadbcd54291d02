import { randomBytes, randomUUID } from 'node:crypto'
import { HostedDeploys, isBundle } from './hosted-code.js'
import AjvModule from 'ajv'
import { errors } from '../lib/errors.js'
import { hashSecret } from '../lib/crypto.js'
import { randomSecret, uuidv7 } from '../lib/ids.js'
import type { IntegrationApiKeyRow, IntegrationDefinitionRow, IntegrationLogRow, InstallationRow } from '../store/integration-store.js'
import { UniqueViolation, type BotRow, type IntegrationRow, type JsonObject, type Page, type Store } from '../store/store.js'
import { checkServiceUrl } from './service-url.js'
import type { OutboundPolicy } from '../lib/outbound-policy.js'
import { highestMatching, isVersion } from '../lib/semver.js'
import type { Visibility } from '../store/package-store.js'
import { builtInById, builtInByName } from './builtin-integrations.js'

/**
 * Integrations written with @botpress/sdk and served elsewhere (issue #19): their definitions
 * (createIntegration…, private to a workspace), API keys, logs, and their installations on bots
 * (updateBot({ integrations: { <alias>: { integrationId, … } } })). An installation is one of the
 * bot's integrations (name = the alias) linked to a definition; what talks to the integration over
 * HTTP is src/runtime/integrations.ts.
 */

type AjvClass = typeof import('ajv').default
const Ajv = ((AjvModule as unknown as { default?: AjvClass }).default ?? AjvModule) as AjvClass
const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: true })

/** What createIntegration/updateIntegration accept besides name, version, url and dev (kept as given). */
export interface DefinitionInput {
  name: string
  version: string
  url?: string | null | undefined
  dev?: boolean | undefined
  [key: string]: unknown
}

/** An installation as BotService hands it over (a bot's integration with a definition). */
export interface InstallationInput {
  integrationId?: string | undefined
  enabled?: boolean | undefined
  configuration?: Record<string, unknown> | undefined
  configurationType?: string | null | undefined
  /** Channels of the definition the bot may not use (a message there is refused, never dropped silently). */
  disabledChannels?: unknown
}

/** One installed integration: the bot's integration row, its link and its definition. */
export interface Installation {
  integration: IntegrationRow
  link: InstallationRow
  definition: IntegrationDefinitionRow
}

export const ALIAS = /^[a-z][a-z0-9_-]{0,99}$/
/** The built-in integration an installation may take the place of (Botpress's own `webhook` integration). */
const REPLACEABLE_BUILT_IN = 'webhook'
export const NAME = /^[a-z0-9][a-z0-9_/-]{0,199}$/
export const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/
/** Parts of the definition that are stored and shown as given (objects). */
const OBJECT_PARTS = ['configuration', 'configurations', 'channels', 'states', 'events', 'actions', 'entities', 'user', 'interfaces', 'identifier', 'attributes', 'extraOperations'] as const
const STRING_PARTS = ['title', 'description', 'sdkVersion'] as const
/**
 * icon (base64 SVG) and readme (base64 Markdown) as `bp deploy` sends them. Botpress documents no cap; its hub holds
 * an icon of 220,757 bytes (integrations/cerebras: 294,344 base64 characters). Parley takes up to 1 MiB of text each.
 */
export const MAX_ICON_README_CHARS = 1024 * 1024
/** The rest of a definition (schemas, channels…), icon and readme aside. */
const MAX_DEFINITION_BYTES = 1024 * 1024
const VISIBILITIES = ['private', 'public', 'unlisted'] as const

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/** Parts that are records of named entries (null removes an entry in an update). */
const RECORD_PARTS = new Set(['configurations', 'channels', 'states', 'events', 'actions', 'entities', 'interfaces', 'attributes'])
const withoutNulls = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null))

/** A JSON schema that compiles (400 naming where it is otherwise). */
function checkSchema(schema: unknown, where: string): void {
  if (schema === undefined) return
  if (!isObject(schema)) throw errors.invalidPayload(`${where} must be a JSON schema object`)
  try {
    ajv.compile(schema)
  } catch (err) {
    throw errors.invalidPayload(`${where} is not a valid JSON schema: ${(err as Error).message}`)
  }
}

/** Checks and normalizes the definition parts of a create or update: the stored `definition` JSON. */
export function checkDefinition(input: Record<string, unknown>, objectParts: readonly string[] = OBJECT_PARTS): JsonObject {
  const out: JsonObject = {}
  for (const part of objectParts) {
    const value = input[part]
    if (value === undefined || value === null) continue
    if (!isObject(value)) throw errors.invalidPayload(`${part} must be an object`)
    // An update names what it removes with null (`actions: { old: null }`, as `bp deploy` sends it): the part given
    // replaces the stored one, so a removed entry is simply left out.
    out[part] = (RECORD_PARTS.has(part) ? withoutNulls(value) : value) as JsonObject
  }
  for (const c of Object.values((out.channels ?? {}) as Record<string, unknown>)) {
    if (isObject(c) && isObject(c.messages)) c.messages = withoutNulls(c.messages)
  }
  for (const part of STRING_PARTS) {
    const value = input[part]
    if (value === undefined || value === null) continue
    if (typeof value !== 'string' || value.length > 10_000) throw errors.invalidPayload(`${part} must be a string of at most 10000 characters`)
    out[part] = value
  }
  for (const part of ['icon', 'readme'] as const) {
    const value = input[part]
    if (value === undefined || value === null) continue
    if (typeof value !== 'string' || value.length > MAX_ICON_README_CHARS) {
      throw errors.invalidPayload(`${part} must be a string of at most ${MAX_ICON_README_CHARS} characters (base64)${typeof value === 'string' ? `: it has ${value.length}` : ''}`)
    }
    out[part] = value
  }
  const visibility = checkVisibility(input)
  if (visibility !== undefined) out.visibility = visibility
  checkSchema((out.configuration as Record<string, unknown> | undefined)?.schema, 'configuration.schema')
  for (const [type, c] of Object.entries((out.configurations ?? {}) as Record<string, unknown>)) {
    if (!isObject(c)) throw errors.invalidPayload(`configurations.${type} must be an object`)
    checkSchema(c.schema, `configurations.${type}.schema`)
  }
  for (const [channel, c] of Object.entries((out.channels ?? {}) as Record<string, unknown>)) {
    if (!isObject(c) || !isObject(c.messages)) throw errors.invalidPayload(`channels.${channel}.messages must be an object of message types`)
    for (const [type, m] of Object.entries(c.messages)) {
      if (!isObject(m)) throw errors.invalidPayload(`channels.${channel}.messages.${type} must be an object with a schema`)
      checkSchema(m.schema, `channels.${channel}.messages.${type}.schema`)
    }
  }
  for (const [name, a] of Object.entries((out.actions ?? {}) as Record<string, unknown>)) {
    if (!isObject(a) || !isObject(a.input) || !isObject(a.output)) throw errors.invalidPayload(`actions.${name} must have input.schema and output.schema`)
    checkSchema(a.input.schema, `actions.${name}.input.schema`)
    checkSchema(a.output.schema, `actions.${name}.output.schema`)
  }
  for (const [name, e] of Object.entries((out.events ?? {}) as Record<string, unknown>)) {
    if (!isObject(e)) throw errors.invalidPayload(`events.${name} must be an object with a schema`)
    checkSchema(e.schema, `events.${name}.schema`)
  }
  // Secrets: only their names are kept (their values belong to the integration's own environment).
  const secrets = input.secrets
  if (secrets !== undefined && secrets !== null) {
    if (!isObject(secrets)) throw errors.invalidPayload('secrets must be an object of names')
    for (const [name, value] of Object.entries(secrets)) {
      if (!/^[A-Z][A-Z0-9_]{0,99}$/.test(name)) throw errors.invalidPayload(`secrets: "${name.slice(0, 100)}" is not a secret name (UPPER_SNAKE_CASE)`)
      checkSecretValue(name, value)
    }
    out.secrets = Object.keys(secrets)
  }
  const { icon: _icon, readme: _readme, ...sized } = out
  if (Buffer.byteLength(JSON.stringify(sized)) > MAX_DEFINITION_BYTES) throw errors.invalidPayload(`The definition is larger than ${MAX_DEFINITION_BYTES} bytes`)
  return out
}

/** `visibility` (private, public, unlisted) or the older `public: true`; undefined when neither is given. */
export function checkVisibility(input: Record<string, unknown>): Visibility | undefined {
  const v = input.visibility
  if (v !== undefined && v !== null) {
    if (typeof v !== 'string' || !(VISIBILITIES as readonly string[]).includes(v)) throw errors.invalidPayload(`visibility must be one of ${VISIBILITIES.join(', ')}`)
    return v as Visibility
  }
  if (input.public === true) return 'public'
  if (input.public === false) return 'private'
  return undefined
}

/** A secret's value as createIntegration/updateIntegration take it: a string (set), null or an object (declared, no value). */
function checkSecretValue(name: string, value: unknown): void {
  if (value === null || value === undefined || isObject(value)) return
  if (typeof value !== 'string' || value.length > 10_000 || value.includes('\u0000') || !value.isWellFormed()) {
    throw errors.invalidPayload(`secrets.${name} must be a string of at most 10000 characters (its value) or null`)
  }
}

/** updateBot's `integrations.<alias>.disabledChannels`: channels of the definition (400 otherwise); undefined keeps the current ones. */
function checkDisabledChannels(definition: IntegrationDefinitionRow, alias: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (value === null) return []
  if (!Array.isArray(value) || value.length > 100 || value.some((c) => typeof c !== 'string')) throw errors.invalidPayload(`integrations.${alias}.disabledChannels must be an array of channel names`)
  const channels = (definition.definition.channels ?? {}) as Record<string, unknown>
  for (const c of value as string[]) {
    if (!Object.hasOwn(channels, c)) throw errors.invalidPayload(`integrations.${alias}.disabledChannels: integration "${definition.name}" has no channel "${c.slice(0, 100)}" (it has: ${Object.keys(channels).join(', ') || 'none'})`)
  }
  return [...new Set(value as string[])]
}

/** An integration's `code`: the CommonJS bundle `bp build` makes (run as hosted code); anything else is refused. */
function checkCode(code: unknown): string {
  if (typeof code !== 'string' || !isBundle(code)) {
    throw errors.invalidPayload('code must be the CommonJS bundle `bp build` makes (.botpress/dist/index.cjs): Parley runs it as hosted code')
  }
  return code
}

/** The values given in `secrets` (strings), and the ones removed (null) when `removals`. */
function secretValues(input: Record<string, unknown>, removals: boolean): Record<string, string | null> {
  const secrets = isObject(input.secrets) ? input.secrets : {}
  const out: Record<string, string | null> = {}
  for (const [name, value] of Object.entries(secrets)) {
    if (typeof value === 'string') out[name] = value
    else if (value === null && removals) out[name] = null
  }
  return out
}

/**
 * Told when an installation is enabled (register: awaited, so updateBot answers its outcome as Botpress does and the
 * CLI reads it) or disabled or removed (unregister: in the background). IntegrationDelivery's lifecycle (compose.ts),
 * given by BotService with each apply.
 */
export type InstallationLifecycle = (bot: BotRow, installation: Installation, operation: 'register' | 'unregister') => Promise<void> | void

export class IntegrationService {
  private readonly clock: () => number

  private readonly hosted: HostedDeploys

  constructor(
    private readonly store: Store,
    private readonly options: {
      clock?: () => number
      /** Where an integration's url may point (config.outbound); the built-in policy by default. */
      outbound?: OutboundPolicy
    } = {},
  ) {
    this.clock = options.clock ?? Date.now
    this.hosted = new HostedDeploys(store, this.clock)
  }

  // ---- definitions ----

  async create(workspaceId: string, input: DefinitionInput): Promise<IntegrationDefinitionRow> {
    const { url, definition } = await this.checkCreate(workspaceId, input)
    const now = this.clock()
    const row: IntegrationDefinitionRow = {
      id: uuidv7(), workspaceId, name: input.name, version: input.version, url, dev: input.dev ?? false,
      signingSecret: randomBytes(24).toString('base64url'), definition, createdAt: now, updatedAt: now, visibility: checkVisibility(input) ?? 'private',
    }
    try {
      await this.store.integrations.createDefinition(row)
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Integration', `${input.name}@${input.version}`)
      throw err
    }
    // Secret values: for the integration only (getIntegrationSecrets with its own key); the definition keeps the names.
    await this.store.integrations.setSecrets(row.id, secretValues(input, false))
    // Its bundle runs as hosted code, unless a url was given (the integration is served there).
    const hostedAt = await this.deployCode(row.id, input.code)
    if (hostedAt === undefined || input.url !== undefined) return row
    return (await this.store.integrations.updateDefinition(row.id, { url: hostedAt }, now)) ?? row
  }

  /**
   * validateIntegrationCreation (`bp deploy --dryRun`): every check of createIntegration, the name and version still
   * free included, and nothing written.
   */
  async validateCreate(workspaceId: string, input: DefinitionInput): Promise<void> {
    await this.checkCreate(workspaceId, input)
    if (await this.store.integrations.findDefinition(workspaceId, input.name, input.version)) throw errors.alreadyExists('Integration', `${input.name}@${input.version}`)
  }

  private async checkCreate(workspaceId: string, input: DefinitionInput): Promise<{ url: string | null; definition: JsonObject }> {
    if (!NAME.test(input.name)) throw errors.invalidPayload('name must be 1 to 200 characters: lowercase letters, digits, -, _ and /')
    if (!VERSION.test(input.version)) throw errors.invalidPayload('version must be a semantic version (1.2.3)')
    await this.checkHandle(workspaceId, input.name)
    const url = checkServiceUrl(input.url, this.options.outbound) ?? null
    const definition = checkDefinition(input)
    if (input.code !== undefined && input.code !== null) checkCode(input.code)
    checkVisibility(input)
    secretValues(input, false)
    await this.checkInterfaces(workspaceId, definition)
    return { url, definition }
  }

  /**
   * `code` as `bp deploy` sends it (the CommonJS bundle `bp build` makes) kept as hosted code: answers the url its
   * process is reached at (src/domain/hosted-code.ts). Checked before anything is written.
   */
  private async deployCode(id: string, code: unknown): Promise<string | undefined> {
    if (code === undefined || code === null) return undefined
    return this.hosted.deploy('integration', id, checkCode(code))
  }

  /** A definition of this workspace: 404 for another workspace's, so ids reveal nothing. */
  async get(workspaceId: string, id: string): Promise<IntegrationDefinitionRow> {
    const row = id.length <= 200 ? await this.store.integrations.getDefinition(id) : undefined
    if (!row || row.workspaceId !== workspaceId) throw errors.notFound('Integration', id)
    return row
  }

  /** `version`: exact, `latest` (the last created) or a range such as `<1.2.3` (the highest in it; src/lib/semver.ts). */
  async getByName(workspaceId: string, name: string, version: string): Promise<IntegrationDefinitionRow> {
    const find = async (n: string) => version === 'latest' || isVersion(version)
      ? this.store.integrations.findDefinition(workspaceId, n, version === 'latest' ? undefined : version)
      : highestMatching(await this.store.integrations.definitionVersions(n, workspaceId), version)
    // A bare name also finds the workspace's `<handle>/<name>`: a bot whose bp_modules say `telegram` finds the
    // `handle/telegram` its workspace deployed, as Botpress's bots find Botpress's own (handle-less) hub integrations.
    const handle = name.includes('/') ? undefined : await this.store.packages.handleOf(workspaceId)
    const row = (await find(name)) ?? (handle !== undefined ? await find(`${handle}/${name}`) : undefined)
    if (!row) throw errors.notFound('Integration', `${name}@${version}`)
    return row
  }

  /** The hub (getPublicIntegration): the built-in chat and webhook, then public and unlisted definitions of every workspace. */
  async hubGet(name: string, version: string): Promise<IntegrationDefinitionRow> {
    const builtIn = builtInByName(name)
    const row = (builtIn && highestMatching([builtIn], version)) ?? highestMatching(await this.store.integrations.definitionVersions(name, undefined), version)
    if (!row) throw errors.notFound('Integration', `${name}@${version}`)
    return row
  }

  /**
   * The hub by id (getPublicIntegrationById): a built-in, a public or unlisted definition, or the built-in one a bot of
   * this workspace has (bot.integrations.chat.id is the bot's own integration id; `bp deploy` looks it up here).
   */
  async hubGetById(workspaceId: string, id: string): Promise<IntegrationDefinitionRow> {
    const builtIn = builtInById(id)
    if (builtIn) return builtIn
    const row = id.length <= 200 ? await this.store.integrations.getDefinition(id) : undefined
    if (row && row.visibility !== 'private') return row
    const own = id.length <= 200 && !row ? await this.store.getIntegration(id) : undefined
    const bot = own && await this.store.getBot(own.botId)
    const ownBuiltIn = own && bot?.workspaceId === workspaceId && !(await this.installation(own)) ? builtInByName(own.name) : undefined
    if (ownBuiltIn) return ownBuiltIn
    throw errors.notFound('Integration', id)
  }

  /** A name `handle/name` belongs to the workspace holding that handle (updateWorkspace({ handle })). */
  private async checkHandle(workspaceId: string, name: string): Promise<void> {
    const slash = name.indexOf('/')
    if (slash < 0) return
    const handle = name.slice(0, slash)
    const own = await this.store.packages.handleOf(workspaceId)
    if (own !== handle) {
      throw errors.invalidPayload(own === undefined
        ? `Integration "${name}": this workspace has no handle; claim "${handle}" first (updateWorkspace({ handle }))`
        : `Integration "${name}": the workspace handle is "${own}", not "${handle}"`)
    }
  }

  /** Each `interfaces.<alias>.id` is an interface this workspace may use (its own or a public one). */
  private async checkInterfaces(workspaceId: string, definition: JsonObject): Promise<void> {
    for (const [alias, ref] of Object.entries((definition.interfaces ?? {}) as Record<string, unknown>)) {
      if (ref === null) continue
      const id = isObject(ref) ? ref.id : undefined
      if (typeof id !== 'string') throw errors.invalidPayload(`interfaces.${alias}.id must be the id of an interface (getPublicInterface)`)
      const found = id.length <= 200 ? await this.store.packages.getDefinition('interface', id) : undefined
      if (!found || (found.workspaceId !== workspaceId && found.visibility === 'private')) throw errors.referenceNotFound(`interfaces.${alias}: interface "${id.slice(0, 200)}" not found`)
    }
  }

  list(workspaceId: string, filter: { name?: string | undefined; version?: string | undefined; dev?: boolean | undefined }, nextToken: string | undefined, pageSize: number): Promise<Page<IntegrationDefinitionRow>> {
    return this.store.integrations.listDefinitions(workspaceId, filter, { after: nextToken, limit: pageSize })
  }

  /** validateIntegrationUpdate (`bp deploy --dryRun` of a version that exists): every check of updateIntegration, nothing written. */
  async validateUpdate(workspaceId: string, id: string, input: Record<string, unknown>): Promise<void> {
    await this.checkUpdate(workspaceId, id, input)
  }

  private async checkUpdate(workspaceId: string, id: string, input: Record<string, unknown>) {
    const current = await this.get(workspaceId, id)
    const url = input.url === undefined ? undefined : checkServiceUrl(input.url as string | null, this.options.outbound)
    if (input.code !== undefined && input.code !== null) checkCode(input.code)
    const parts = checkDefinition(input)
    if (input.dev !== undefined && typeof input.dev !== 'boolean') throw errors.invalidPayload('dev must be a boolean')
    checkVisibility(input)
    secretValues(input, true)
    await this.checkInterfaces(workspaceId, parts)
    return { current, url, parts }
  }

  async update(workspaceId: string, id: string, input: Record<string, unknown>): Promise<IntegrationDefinitionRow> {
    const checked = await this.checkUpdate(workspaceId, id, input)
    const { current, parts } = checked
    let url = checked.url
    // Secrets: the names given join the declared ones; a string sets a value, null removes it.
    if (parts.secrets !== undefined) parts.secrets = [...new Set([...((current.definition.secrets ?? []) as string[]), ...(parts.secrets as string[])])]
    const definition = Object.keys(parts).length > 0 ? { ...current.definition, ...parts } : undefined
    const hostedAt = await this.deployCode(id, input.code)
    if (url === undefined && hostedAt !== undefined) url = hostedAt
    const updated = await this.store.integrations.updateDefinition(id, { url, dev: input.dev as boolean | undefined, definition, visibility: checkVisibility(input) }, this.clock())
    if (!updated) throw errors.notFound('Integration', id)
    await this.store.integrations.setSecrets(id, secretValues(input, true))
    return updated
  }

  /** Refused while a bot has it installed (uninstall it first: updateBot({ integrations: { <alias>: null } })). */
  async delete(workspaceId: string, id: string): Promise<void> {
    await this.get(workspaceId, id)
    const installs = await this.store.integrations.countInstallations(id)
    if (installs > 0) throw errors.invalidPayload(`Integration "${id}" is installed in ${installs} bot integration(s): remove those installations first`)
    await this.store.integrations.deleteDefinition(id)
  }

  // ---- API keys ----

  async createApiKey(workspaceId: string, definitionId: string, note: string): Promise<IntegrationApiKeyRow & { value: string }> {
    await this.get(workspaceId, definitionId)
    const value = randomSecret('iak')
    const row: IntegrationApiKeyRow = { id: uuidv7(), definitionId, note, createdAt: this.clock() }
    await this.store.integrations.createApiKey({ ...row, tokenHash: hashSecret(value) })
    return { ...row, value }
  }

  async listApiKeys(workspaceId: string, definitionId: string): Promise<IntegrationApiKeyRow[]> {
    await this.get(workspaceId, definitionId)
    return this.store.integrations.listApiKeys(definitionId)
  }

  /** An API key of a definition of this workspace (404 otherwise). */
  async deleteApiKey(workspaceId: string, id: string): Promise<void> {
    // Keys are looked up through the workspace's definitions, so another workspace's key id is 404.
    for (let page: Page<IntegrationDefinitionRow> | undefined, after: string | undefined; ;) {
      page = await this.store.integrations.listDefinitions(workspaceId, {}, { after, limit: 100 })
      for (const d of page.items) if (await this.store.integrations.deleteApiKey(d.id, id)) return
      if (!page.next) break
      after = page.next
    }
    throw errors.notFound('Integration API key', id)
  }

  // ---- logs ----

  async logs(workspaceId: string, id: string, q: { timeStart?: string | undefined; timeEnd?: string | undefined; level?: string | undefined; conversationId?: string | undefined; nextToken?: string | undefined }): Promise<Page<IntegrationLogRow>> {
    await this.get(workspaceId, id)
    const time = (v: string | undefined, what: string) => {
      if (v === undefined) return undefined
      const ms = Date.parse(v)
      if (!Number.isFinite(ms)) throw errors.invalidQuery(`${what} must be an ISO 8601 date`)
      return ms
    }
    return this.store.integrations.listLogs(id, { from: time(q.timeStart, 'timeStart'), to: time(q.timeEnd, 'timeEnd'), level: q.level, conversationId: q.conversationId }, { after: q.nextToken, limit: 100 })
  }

  async log(definitionId: string, botId: string | null, level: string, message: string, conversationId: string | null = null): Promise<void> {
    await this.store.integrations.appendLogs([{ id: uuidv7(), definitionId, botId, at: this.clock(), level, message: message.slice(0, 4000), conversationId }]).catch(() => {})
  }

  // ---- installations ----

  /** The installations among a bot's integrations (the others are built-in). */
  async installations(integrations: IntegrationRow[]): Promise<Installation[]> {
    const links = await this.store.integrations.installationsOf(integrations.map((i) => i.id))
    const out: Installation[] = []
    for (const link of links) {
      const definition = await this.store.integrations.getDefinition(link.definitionId)
      const integration = integrations.find((i) => i.id === link.integrationId)
      if (definition && integration) out.push({ integration, link, definition })
    }
    return out
  }

  async installation(integration: IntegrationRow): Promise<Installation | undefined> {
    return (await this.installations([integration]))[0]
  }

  /** The installation named `alias` of a bot (enabled or not). */
  async installationByAlias(bot: BotRow, alias: string): Promise<Installation | undefined> {
    const integration = (await this.store.listIntegrations(bot.id)).find((i) => i.name === alias)
    return integration && this.installation(integration)
  }

  /** The configuration an installation is given, checked against the definition's schema for its type. */
  private checkConfiguration(definition: IntegrationDefinitionRow, alias: string, type: string | null, configuration: Record<string, unknown>): void {
    const def = definition.definition
    const schema = type === null
      ? (def.configuration as Record<string, unknown> | undefined)?.schema
      : ((def.configurations as Record<string, Record<string, unknown>> | undefined)?.[type])?.schema
    if (type !== null && !(def.configurations as Record<string, unknown> | undefined)?.[type]) {
      throw errors.invalidPayload(`integrations.${alias}.configurationType: integration "${definition.name}" has no configuration "${type}"`)
    }
    if (schema === undefined) return
    const validate = ajv.compile(schema as object)
    if (!validate(configuration)) {
      const e = validate.errors?.[0]
      throw errors.invalidPayload(`integrations.${alias}.configuration${e?.instancePath.replaceAll('/', '.') ?? ''} ${e?.message ?? 'does not match the schema'} (configuration of ${definition.name}@${definition.version})`)
    }
  }

  /**
   * An SDK integration installed as `webhook` (Botpress's integrations/webhook) replaces the bot's built-in
   * webhook: `integrations.webhook` with an `integrationId`, or once it is an installation, goes to apply.
   */
  async replacesBuiltIn(name: string, existing: IntegrationRow | undefined, value: InstallationInput | null): Promise<boolean> {
    if (name !== REPLACEABLE_BUILT_IN) return false
    if (value !== null && value.integrationId !== undefined) return true
    return existing !== undefined && (await this.installation(existing)) !== undefined
  }

  /**
   * updateBot's `integrations.<alias>` for an alias that is not a built-in integration (or `webhook`, replaced): install a
   * definition of the bot's workspace, change its configuration, enable or disable it (null disables;
   * the rows stay, so its users and conversations survive a re-enable). register/unregister follow.
   */
  async apply(bot: BotRow, alias: string, existing: IntegrationRow | undefined, value: InstallationInput | null, now: number, onInstalled?: InstallationLifecycle): Promise<void> {
    if (!ALIAS.test(alias)) throw errors.invalidPayload(`integrations: "${alias.slice(0, 100)}" is not an integration alias (lowercase letters, digits, - and _, starting with a letter)`)
    const current = existing && (await this.installation(existing))
    // The built-in webhook's row becomes the installation (its webhookId stays; /webhooks/{id} then answers 404).
    if (existing && !current && alias !== REPLACEABLE_BUILT_IN) throw errors.invalidPayload(`integrations.${alias} is a built-in integration`)
    if (value === null || value.enabled === false) {
      if (!existing || !current) {
        if (value === null) return
      } else {
        if (existing.enabled) {
          await this.store.updateIntegration(existing.id, { enabled: false }, now)
          void onInstalled?.(bot, { ...current, integration: { ...existing, enabled: false } }, 'unregister')
        }
        if (value === null) return
      }
    }
    if (value === null) return
    if (value.integrationId !== undefined && typeof value.integrationId !== 'string') throw errors.invalidPayload(`integrations.${alias}.integrationId must be a string`)
    const definitionId = value.integrationId ?? current?.definition.id
    if (definitionId === undefined) throw errors.invalidPayload(`integrations.${alias}.integrationId is required to install an integration (the id createIntegration answered)`)
    const definition = definitionId === current?.definition.id ? current.definition : await this.get(bot.workspaceId, definitionId)
    if (value.configuration !== undefined && !isObject(value.configuration)) throw errors.invalidPayload(`integrations.${alias}.configuration must be an object`)
    if (value.configurationType !== undefined && value.configurationType !== null && typeof value.configurationType !== 'string') {
      throw errors.invalidPayload(`integrations.${alias}.configurationType must be a string or null`)
    }
    const type = value.configurationType === undefined ? current?.link.configurationType ?? null : value.configurationType
    const configuration = (value.configuration ?? existing?.configuration ?? {}) as JsonObject
    this.checkConfiguration(definition, alias, type, configuration)
    const enabled = value.enabled !== false
    let integration: IntegrationRow
    if (existing) {
      await this.store.updateIntegration(existing.id, { enabled, configuration }, now)
      integration = { ...existing, enabled, configuration, updatedAt: now }
    } else {
      integration = {
        id: uuidv7(), botId: bot.id, name: alias, webhookId: randomUUID(), encryptionKey: randomBytes(32).toString('base64url'),
        enabled, configuration, createdAt: now, updatedAt: now,
      }
      await this.store.createIntegration(integration)
    }
    const link: InstallationRow = { integrationId: integration.id, definitionId: definition.id, configurationType: type, disabledChannels: checkDisabledChannels(definition, alias, value.disabledChannels) ?? current?.link.disabledChannels }
    await this.store.integrations.setInstallation(link)
    if (enabled) await onInstalled?.(bot, { integration, link, definition }, 'register')
  }

  /** The outcome of an installation's register, where getBot shows it (integrations.<alias>.status / statusReason). */
  async registered(integrationId: string, failure: string | null): Promise<void> {
    await this.store.integrations.setInstallationStatus(integrationId, failure === null ? 'registered' : 'registration_failed', failure?.slice(0, 1000) ?? null)
  }

  // ---- the integration calling the Runtime API ----

  /**
   * The installation an integration API key acts for on a bot: `x-integration-id` (when sent) must be
   * the key's own integration (403 otherwise), and the bot must have it installed and enabled (403).
   */
  async callerInstallation(definitionId: string, botId: string | undefined, headerIntegrationId: string | undefined, alias: string | undefined): Promise<{ bot: BotRow; integration: IntegrationRow }> {
    if (!botId) throw errors.unauthorized('The x-bot-id header is required')
    const bot = botId.length <= 200 ? await this.store.getBot(botId) : undefined
    if (!bot) throw errors.unauthorized('Invalid x-bot-id: no such bot')
    if (headerIntegrationId !== undefined && headerIntegrationId !== definitionId) throw errors.forbidden('This integration API key belongs to another integration')
    const installs = (await this.installations(await this.store.listIntegrations(bot.id)))
      .filter((i) => i.definition.id === definitionId && i.integration.enabled && (alias === undefined || i.integration.name === alias))
    const found = installs[0]
    if (!found) throw errors.forbidden('This integration is not installed (and enabled) in this bot')
    return { bot, integration: found.integration }
  }
}
