import type { Installation, InstallationLifecycle } from './integration-service.js'
import { randomBytes, randomUUID } from 'node:crypto'
import { errors } from '../lib/errors.js'
import { checkServiceUrl } from './service-url.js'
import { HostedDeploys, isHostedUrl } from './hosted-code.js'
import { classifyCode, type BotPlugin, type BotPlugins, type DeployedCode } from './bot-deploy.js'
import type { OutboundPolicy } from '../lib/outbound-policy.js'
import { hashSecret } from '../lib/crypto.js'
import { randomSecret, uuidv7 } from '../lib/ids.js'
import type { BotApiKeyRow, BotListFilter, BotLogFilter, BotLogRow, BotRow, DeletedBot, IntegrationRow, JsonObject, Page, Store } from '../store/store.js'
import { sanitizeWebchatConfig, webchatConfigProblem } from '../webchat/shared/webchat-config.js'
import { webchatCode, type WebchatCodeType } from '../webchat/snippets.js'

/** Loads bot code in a sandbox: its load error (with the line), or nothing when it loads. */
export type CodeChecker = (code: string) => Promise<string | undefined>

/** Built-in integrations, keyed by name. Each enabled one gets its own webhook id and key. */
export const BUILT_IN_INTEGRATIONS = ['chat', 'webhook'] as const
export type IntegrationName = (typeof BUILT_IN_INTEGRATIONS)[number]

const isBuiltIn = (name: string): name is IntegrationName => (BUILT_IN_INTEGRATIONS as readonly string[]).includes(name)

export interface IntegrationInput {
  enabled?: boolean | undefined
  /** An installed integration's definition (createIntegration's id); any alias other than chat (as `webhook` it replaces the built-in one). */
  integrationId?: string | undefined
  configurationType?: string | null | undefined
  /** Installed integrations: channels the bot may not use. */
  disabledChannels?: unknown
  /** `secret` (webhook only): HMAC-SHA256 key requests must be signed with; null removes it. */
  configuration?: { encryptionKey?: string | undefined; secret?: string | null | undefined; webchat?: unknown; [key: string]: unknown } | undefined
}

/** Installs integrations served elsewhere (IntegrationService.apply). */
export interface IntegrationInstaller {
  installations(integrations: IntegrationRow[]): Promise<Installation[]>
  apply(bot: BotRow, alias: string, existing: IntegrationRow | undefined, value: IntegrationInput | null, now: number, onInstalled?: InstallationLifecycle): Promise<void>
  /** True when `integrations.<name>` of a built-in name is (or becomes) an installation: `webhook` with an integrationId. */
  replacesBuiltIn(name: string, existing: IntegrationRow | undefined, value: IntegrationInput | null): Promise<boolean>
}

export interface BotInput {
  name?: string | undefined
  description?: string | null | undefined
  tags?: Record<string, string | null> | undefined
  dev?: boolean | undefined
  code?: string | undefined
  /** A bot served elsewhere (an @botpress/sdk program): its events are POSTed there; null removes it. */
  url?: string | null | undefined
  /** Seconds each hook, action or card run may take (Botpress's maxExecutionTime); null restores the default. */
  maxExecutionTime?: number | null | undefined
  /** Keyed by integration name (or, on update, the integration's id); null disables it. */
  integrations?: Record<string, IntegrationInput | null> | undefined
  /** The bot definition's state declarations `{ name: { type, schema, expiry? } }`; null removes one (RuntimeStateService). */
  states?: Record<string, unknown> | undefined
  /** The bot definition's recurring (cron) events `{ key: { type, payload, schedule: { cron } } }`; null removes one. */
  recurringEvents?: Record<string, unknown> | undefined
  /**
   * The bot's webchat settings (src/webchat/shared/webchat-config.ts), merged into the stored ones: a key set to
   * null is removed, `webchat: null` removes them all. Also accepted as `integrations.chat.configuration.webchat`
   * (what @botpress/client's updateBot can send).
   */
  webchat?: unknown
  /** The bot definition's actions `{ name: { input, output, … } }` (what `bp deploy` sends); null removes one. */
  actions?: unknown
  /** `bp deploy`'s plugins: { <alias>: { id, enabled, configuration, interfaces, integrations } | null } (bot-deploy.ts). */
  plugins?: unknown
}

export interface BotWithIntegrations {
  bot: BotRow
  integrations: IntegrationRow[]
  /** Which of them are installed integrations served elsewhere (their definitions). */
  installations?: Installation[] | undefined
  /** Declared states (`states` of the bot definition). */
  states?: Record<string, unknown> | undefined
  /** Declared recurring events (`recurringEvents` of the bot definition). */
  recurringEvents?: Record<string, unknown> | undefined
  /** Its plugins (updateBot({ plugins })) with their definitions. */
  plugins?: BotPlugin[] | undefined
}

/** Where recurring event declarations are checked and kept (RecurringEventService). */
export interface RecurringDeclarations {
  check(input: unknown): unknown
  declare(botId: string, input: unknown): Promise<void>
  definitions(botId: string): Promise<Record<string, unknown>>
}

/** Where state declarations are checked and kept (RuntimeStateService). */
export interface StateDeclarations {
  /** Checks `input` without storing anything (400 when a declaration is refused). */
  check(input: Record<string, unknown>): void
  declare(botId: string, input: Record<string, unknown>): Promise<void>
  definitions(botId: string): Promise<Record<string, unknown>>
}

/**
 * Resources outside the database that belong to a bot (file blobs, webhook bodies). `prepare` runs
 * before the bot's rows are deleted and returns what to do once they are gone (given what the store
 * reported deleting), so a failed delete never leaves rows pointing at removed content.
 */
export interface BotResourceCleaner {
  prepare(botId: string): Promise<(deleted: DeletedBot) => Promise<void>>
}

const MIN_ENCRYPTION_KEY_LENGTH = 16
/**
 * The webchat settings of a create or update (`webchat`, or `integrations.chat.configuration.webchat`) applied to
 * `current`: undefined when the input has none, null when none are left. 400 naming the field for a bad value.
 */
export function applyWebchatInput(input: BotInput, current: JsonObject | null): JsonObject | null | undefined {
  const viaIntegration = input.integrations?.chat?.configuration?.webchat
  const parts = [
    ['integrations.chat.configuration.webchat', viaIntegration],
    ['webchat', input.webchat],
  ] as const
  let next: JsonObject | null | undefined
  for (const [where, value] of parts) {
    if (value === undefined) continue
    if (value === null) {
      next = null
      continue
    }
    if (typeof value !== 'object' || Array.isArray(value)) throw errors.invalidPayload(`${where} must be an object of webchat settings, or null`)
    const merged: JsonObject = { ...(next === undefined ? current ?? {} : next ?? {}) }
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === null) {
        delete merged[key]
        continue
      }
      const problem = webchatConfigProblem(key, v)
      if (problem) throw errors.invalidPayload(`${where}.${key} ${problem}`)
      merged[key] = v as JsonObject[string]
    }
    next = merged
  }
  if (next !== undefined && next !== null && Object.keys(next).length === 0) return null
  return next
}

export function newIntegration(botId: string, name: IntegrationName, now: number, encryptionKey?: string, configuration: JsonObject = {}): IntegrationRow {
  return {
    id: uuidv7(),
    botId,
    name,
    webhookId: randomUUID(),
    encryptionKey: encryptionKey ?? randomBytes(32).toString('base64url'),
    enabled: true,
    configuration,
    createdAt: now,
    updatedAt: now,
  }
}

function checkEncryptionKey(input: IntegrationInput | null | undefined): string | undefined {
  const key = input?.configuration?.encryptionKey
  if (key !== undefined && key.length < MIN_ENCRYPTION_KEY_LENGTH) {
    throw errors.invalidPayload(`integrations.chat.configuration.encryptionKey must be at least ${MIN_ENCRYPTION_KEY_LENGTH} characters`)
  }
  return key
}

const MIN_WEBHOOK_SECRET_LENGTH = 16

/** The webhook integration's signing secret: a string (set), null (removed) or undefined (unchanged). */
function checkWebhookSecret(name: string, input: IntegrationInput | null | undefined): string | null | undefined {
  const secret = input?.configuration?.secret
  if (secret === undefined) return undefined
  if (name !== 'webhook') throw errors.invalidPayload(`integrations.${name}.configuration.secret is only for the webhook integration`)
  if (secret !== null && (typeof secret !== 'string' || secret.length < MIN_WEBHOOK_SECRET_LENGTH || secret.length > 512)) {
    throw errors.invalidPayload(`integrations.webhook.configuration.secret must be a string of ${MIN_WEBHOOK_SECRET_LENGTH} to 512 characters, or null`)
  }
  return secret
}

/** Declared actions at most this large (JSON), like an integration definition. */
const MAX_ACTIONS_BYTES = 1024 * 1024

/**
 * createBot/updateBot `actions`: merged into the declared ones (a name set to null is removed, as `bp deploy`
 * sends removals); undefined when not given (kept as they are).
 */
export function mergeActions(current: JsonObject | null, input: unknown): JsonObject | undefined {
  if (input === undefined) return undefined
  if (input === null) return {}
  if (typeof input !== 'object' || Array.isArray(input)) throw errors.invalidPayload('actions must be an object of action definitions')
  const next: JsonObject = { ...(current ?? {}) }
  for (const [name, action] of Object.entries(input as Record<string, unknown>)) {
    if (name === '' || name.length > 200 || name.includes(':')) throw errors.invalidPayload(`actions: "${name.slice(0, 100)}" is not an action name (1 to 200 characters, no ":")`)
    if (action === null) delete next[name]
    else if (typeof action !== 'object' || Array.isArray(action)) throw errors.invalidPayload(`actions.${name} must be an object (its input and output) or null`)
    else next[name] = action as JsonObject
  }
  if (Buffer.byteLength(JSON.stringify(next)) > MAX_ACTIONS_BYTES) throw errors.invalidPayload(`actions are larger than ${MAX_ACTIONS_BYTES} bytes`)
  return next
}

export class BotService {
  private readonly checkCode?: CodeChecker
  private readonly clock: () => number
  private readonly hosted: HostedDeploys

  /**
   * `checkCode` loads deployed code in the sandbox; `onChanged` is told about every bot that changed
   * or was deleted (the runtime drops what it cached about it, on every instance).
   */
  constructor(
    private readonly store: Store,
    private readonly options: {
      checkCode?: CodeChecker
      onChanged?: (botId: string) => Promise<void>
      /** Told when a bot's url was set or changed (the remote bot gets a `register` request, best effort). */
      onUrlChanged?: (bot: BotRow) => void
      clock?: () => number
      states?: StateDeclarations
      recurring?: RecurringDeclarations
      /** Aliases other than the built-in ones: installations of integrations served elsewhere. */
      installer?: IntegrationInstaller
      /** An installation enabled (register, awaited) or disabled (unregister, in the background): IntegrationDelivery's lifecycle. */
      onInstalled?: InstallationLifecycle
      /** Where a bot's url may point (config.outbound); the built-in policy by default. */
      outbound?: OutboundPolicy
      /** A bot's plugins (updateBot({ plugins }), bot-deploy.ts). */
      plugins?: BotPlugins
    } = {},
  ) {
    this.checkCode = options.checkCode
    this.clock = options.clock ?? Date.now
    this.hosted = new HostedDeploys(store, this.clock)
  }

  private async changed(botId: string): Promise<void> {
    await this.options.onChanged?.(botId)
  }

  /**
   * A Parley module that loads, or a CommonJS bundle of `bp deploy` (kept for hosted code: bot-deploy.ts); other code
   * that does not load is refused with its error, and the previous code stays live.
   */
  private classify(code: string | undefined): Promise<DeployedCode> {
    return classifyCode(code, this.checkCode)
  }

  /**
   * After the bot row is written: a bundle is kept as hosted code (a new version) and answers the url its process is
   * reached at (src/domain/hosted-code.ts); a Parley module drops a kept bundle.
   */
  private async keepBundle(botId: string, deployed: DeployedCode): Promise<string | undefined> {
    if (deployed.bundle !== undefined) return this.hosted.deploy('bot', botId, deployed.bundle)
    if (deployed.module !== undefined) await this.hosted.remove('bot', botId)
    return undefined
  }

  /** The bot with its integrations, installations, declared states and plugins, as getBot shows it. */
  private async details(bot: BotRow, integrations: IntegrationRow[]): Promise<BotWithIntegrations> {
    return {
      bot, integrations, installations: await this.options.installer?.installations(integrations), states: await this.options.states?.definitions(bot.id),
      recurringEvents: await this.options.recurring?.definitions(bot.id), plugins: await this.options.plugins?.list(bot.id),
    }
  }

  async getLogs(workspaceId: string, botId: string, range: BotLogFilter, nextToken: string | undefined): Promise<Page<BotLogRow>> {
    await this.getBot(workspaceId, botId)
    return this.store.listBotLogs(botId, range, { after: nextToken, limit: 100 })
  }

  async createBot(workspaceId: string, input: BotInput): Promise<BotWithIntegrations> {
    let url = checkServiceUrl(input.url, this.options.outbound) ?? null
    const deployed = await this.classify(input.code)
    if (input.states) this.options.states?.check(input.states)
    if (input.recurringEvents) this.options.recurring?.check(input.recurringEvents)
    const webchat = applyWebchatInput(input, null) ?? null
    const now = this.clock()
    const tags = Object.fromEntries(Object.entries(input.tags ?? {}).filter((e): e is [string, string] => e[1] !== null))
    const bot: BotRow = {
      id: uuidv7(),
      workspaceId,
      name: input.name ?? `bot-${randomBytes(3).toString('hex')}`,
      description: input.description ?? null,
      tags,
      dev: input.dev ?? false,
      signingSecret: randomBytes(24).toString('base64url'),
      code: deployed.module ?? null,
      maxExecutionTime: input.maxExecutionTime ?? null,
      deployedAt: input.code !== undefined ? now : null,
      url,
      webchat,
      actions: mergeActions(null, input.actions) ?? null,
      createdAt: now,
      updatedAt: now,
    }
    const integrations: IntegrationRow[] = []
    // @botpress/client's createBot cannot send `integrations`; a new bot gets the chat integration
    // unless the caller says otherwise, so that it is reachable at once.
    for (const [name, value] of Object.entries(input.integrations ?? { chat: { enabled: true } })) {
      if (!isBuiltIn(name)) throw errors.invalidPayload(`Unknown integration "${name}"; built-in integrations: ${BUILT_IN_INTEGRATIONS.join(', ')}`)
      const key = checkEncryptionKey(value)
      const secret = checkWebhookSecret(name, value)
      if (value && value.enabled !== false) integrations.push(newIntegration(bot.id, name, now, key, secret ? { secret } : {}))
    }
    await this.store.createBot(bot, integrations)
    // A bundle runs as hosted code, unless a url was given with it (the bot is served there).
    const hostedAt = await this.keepBundle(bot.id, deployed)
    if (hostedAt !== undefined && input.url === undefined) {
      bot.url = hostedAt
      url = hostedAt
      await this.store.updateBot(bot.id, { url: hostedAt }, now)
    }
    if (input.states) await this.options.states?.declare(bot.id, input.states)
    if (input.recurringEvents) await this.options.recurring?.declare(bot.id, input.recurringEvents)
    await this.options.plugins?.apply(bot, input.plugins, now)
    if (url !== null) this.options.onUrlChanged?.(bot)
    return this.details(bot, integrations)
  }

  /** A bot of this workspace; 404 for other workspaces' bots, so ids reveal nothing. */
  async getBot(workspaceId: string, id: string): Promise<BotWithIntegrations> {
    const bot = await this.store.getBot(id)
    if (!bot || bot.workspaceId !== workspaceId) throw errors.notFound('Bot', id)
    return this.details(bot, await this.store.listIntegrations(bot.id))
  }

  listBots(filter: BotListFilter, nextToken: string | undefined, pageSize: number): Promise<Page<BotRow>> {
    return this.store.listBots(filter, { after: nextToken, limit: pageSize })
  }

  async updateBot(workspaceId: string, id: string, input: BotInput): Promise<BotWithIntegrations> {
    const { bot, integrations } = await this.getBot(workspaceId, id)
    let url = checkServiceUrl(input.url, this.options.outbound)
    const webchat = applyWebchatInput(input, bot.webchat)
    const deployed = await this.classify(input.code)
    if (input.states) await this.options.states?.declare(bot.id, input.states)
    if (input.recurringEvents) await this.options.recurring?.declare(bot.id, input.recurringEvents)
    const now = this.clock()
    await this.options.plugins?.apply(bot, input.plugins, now)
    // A bundle runs as hosted code (a url given with it wins: the bot is served there); a Parley module ends it.
    const hostedAt = await this.keepBundle(bot.id, deployed)
    if (url === undefined && hostedAt !== undefined) url = hostedAt
    else if (url === undefined && deployed.module !== undefined && isHostedUrl(bot.url)) url = null
    // A bot's first code (or url) starts with the conversations' next message: their history is not replayed as turns.
    const startsRunning = (deployed.module !== undefined || (url !== undefined && url !== null)) && bot.code === null && bot.url === null
    if (startsRunning) await this.store.fastForwardBotCursors(bot.id)
    const actions = mergeActions(bot.actions ?? null, input.actions)
    for (const [keyName, value] of Object.entries(input.integrations ?? {})) {
      const existing = integrations.find((i) => i.name === keyName || i.id === keyName)
      const name = existing?.name ?? keyName
      if (this.options.installer && (!isBuiltIn(name) || await this.options.installer.replacesBuiltIn(name, existing, value))) {
        await this.options.installer.apply(bot, name, existing, value, now, this.options.onInstalled)
        continue
      }
      if (!isBuiltIn(name)) throw errors.invalidPayload(`Unknown integration "${keyName}"; built-in integrations: ${BUILT_IN_INTEGRATIONS.join(', ')}`)
      const key = checkEncryptionKey(value)
      const secret = checkWebhookSecret(name, value)
      const enabled = value !== null && value.enabled !== false
      if (existing) {
        const { secret: _old, ...rest } = existing.configuration
        const configuration = secret === undefined ? undefined : secret === null ? rest : { ...rest, secret }
        await this.store.updateIntegration(existing.id, { enabled, ...(key !== undefined && { encryptionKey: key }), ...(configuration && { configuration }) }, now)
      } else if (enabled) {
        await this.store.createIntegration(newIntegration(bot.id, name, now, key, secret ? { secret } : {}))
      }
    }
    const updated = await this.store.updateBot(
      bot.id,
      {
        name: input.name,
        description: input.description,
        dev: input.dev,
        tags: input.tags,
        // A bundle clears the sandbox code: the bot is now the bundle's (hosted code, #26 item 2).
        code: deployed.bundle !== undefined ? null : deployed.module,
        maxExecutionTime: input.maxExecutionTime,
        url,
        webchat,
        actions,
        // A new limit applies like new code: cached sandboxes of the old version are dropped.
        ...((input.code !== undefined || input.maxExecutionTime !== undefined) && { deployedAt: now }),
      },
      now,
    )
    if (!updated) throw errors.notFound('Bot', id)
    await this.changed(bot.id)
    if (updated.url !== null && updated.url !== bot.url) this.options.onUrlChanged?.(updated)
    return this.details(updated, await this.store.listIntegrations(bot.id))
  }

  /** getBotWebchat: the embed code of one type for the bot's chat integration, carrying its webchat settings. */
  async webchatCode(workspaceId: string, id: string, type: WebchatCodeType, publicUrl: string): Promise<string> {
    const { bot, integrations } = await this.getBot(workspaceId, id)
    const chat = integrations.find((i) => i.name === 'chat' && i.enabled)
    if (!chat) throw errors.invalidPayload(`Bot "${id}" has no enabled chat integration: enable it with updateBot({ integrations: { chat: { enabled: true } } })`)
    return webchatCode(type, { publicUrl, webhookId: chat.webhookId, config: sanitizeWebchatConfig(bot.webchat ?? {}) })
  }

  /** Deletes the bot's rows; `cleaners` remove what it has outside them (BotRemoval gives them: domain/bot-removal.ts). */
  async deleteBot(workspaceId: string, id: string, cleaners: readonly BotResourceCleaner[]): Promise<void> {
    await this.getBot(workspaceId, id)
    const finishers = await Promise.all(cleaners.map((c) => c.prepare(id)))
    const deleted = await this.store.deleteBot(id)
    await this.changed(id)
    for (const finish of finishers) await finish(deleted ?? { webhookBlobNames: [] })
  }

  // ---- bot API keys (the bot's access tokens) ----

  async createApiKey(workspaceId: string, botId: string, note: string): Promise<BotApiKeyRow & { value: string }> {
    await this.getBot(workspaceId, botId)
    const value = randomSecret('bak')
    const row: BotApiKeyRow = { id: uuidv7(), botId, note, createdAt: this.clock() }
    await this.store.createBotApiKey({ ...row, tokenHash: hashSecret(value) })
    return { ...row, value }
  }

  async listApiKeys(workspaceId: string, botId: string): Promise<BotApiKeyRow[]> {
    await this.getBot(workspaceId, botId)
    return this.store.listBotApiKeys(botId)
  }

  /** Keys are addressed by id alone (as in Botpress); only keys of this workspace's bots are found. */
  async deleteApiKey(workspaceId: string, keyId: string): Promise<void> {
    const key = await this.store.getBotApiKey(keyId)
    const bot = key && (await this.store.getBot(key.botId))
    if (!key || !bot || bot.workspaceId !== workspaceId) throw errors.notFound('Bot API key', keyId)
    await this.store.deleteBotApiKey(bot.id, keyId)
  }

}
