import type { Installation } from './integration-service.js'
import { isHostedUrl, shownUrl } from './hosted-code.js'
import type { IntegrationApiKeyRow, IntegrationDefinitionRow } from '../store/integration-store.js'
import type { PackageDefinitionRow } from '../store/package-store.js'
import type { AccessTokenRow, AccountRow, BotApiKeyRow, BotRow, IntegrationRow, MemberRow } from '../store/store.js'
import type { BotWithIntegrations } from './bot-service.js'
import type { BotPlugin } from './bot-deploy.js'
import type { WorkspaceWithStats } from './workspace-service.js'
import { webchatApiUrl, webchatUrl } from '../webchat/urls.js'
import { webhookUrl } from './webhook-service.js'
import { builtInByName } from './builtin-integrations.js'

/** Row → wire object for the Admin API, in the shapes @botpress/client@1.45.0 declares. */
const iso = (ms: number) => new Date(ms).toISOString()
const mapValues = (o: Record<string, unknown>, f: (v: Record<string, unknown>) => unknown) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'object' && v !== null ? f(v as Record<string, unknown>) : v]))

export const accountView = (a: AccountRow) => ({
  id: a.id, email: a.email, displayName: a.displayName, emailVerified: false, createdAt: iso(a.createdAt),
})

export const tokenView = (t: AccessTokenRow) => ({ id: t.id, createdAt: iso(t.createdAt), note: t.note })
export const botApiKeyView = (k: BotApiKeyRow) => ({ id: k.id, createdAt: iso(k.createdAt), note: k.note })

export const workspaceView = ({ workspace: w, ownerId, botCount, handle }: WorkspaceWithStats) => ({
  id: w.id,
  name: w.name,
  ownerId,
  ...(handle !== undefined && { handle }),
  createdAt: iso(w.createdAt),
  updatedAt: iso(w.updatedAt),
  botCount,
  // Fields the client declares that have no meaning for a self-hosted instance get fixed values.
  billingVersion: 'v4' as const,
  plan: 'community' as const,
  blocked: false,
  spendingLimit: 0,
  activeTrialId: null,
})

export const memberView = (m: MemberRow) => ({
  id: m.account.id,
  userId: m.account.id,
  email: m.account.email,
  displayName: m.account.displayName,
  createdAt: iso(m.createdAt),
  role: m.role,
})

export const botSummaryView = (b: BotRow) => ({
  id: b.id,
  createdAt: iso(b.createdAt),
  updatedAt: iso(b.updatedAt),
  name: b.name,
  ...(b.deployedAt !== null && { deployedAt: iso(b.deployedAt) }),
  tags: b.tags,
  dev: b.dev,
  // Hosted code's address is Parley's own (src/domain/hosted-code.ts): a deployed bot shows no url, as on Botpress.
  ...(b.url !== null && !isHostedUrl(b.url) && { url: b.url }),
})

function integrationView(i: IntegrationRow, publicUrl: string, showSecrets: boolean, webchat: BotRow['webchat']) {
  // The webhook signing secret is shown only to roles that may change the bot, like the encryption key.
  const { secret, ...stored } = i.configuration
  // The chat integration shows the bot's webchat settings where @botpress/client's updateBot can set them.
  const configuration = i.name === 'chat' ? { ...stored, webchat: webchat ?? {} } : stored
  return {
    id: i.id,
    name: i.name,
    version: builtInByName(i.name)?.version ?? '1.0.0',
    enabled: i.enabled,
    webhookId: i.webhookId,
    webhookUrl: i.name === 'webhook' ? webhookUrl(publicUrl, i.webhookId) : `${publicUrl}/${i.webhookId}`,
    // Parley's webchat page, and what Botpress's own webchat (@botpress/webchat) takes: its apiUrl and clientId.
    ...(i.name === 'chat' && { webchatUrl: webchatUrl(publicUrl, i.webhookId), webchatApiUrl: webchatApiUrl(publicUrl), webchatClientId: i.webhookId }),
    configurationType: null,
    configuration: showSecrets ? { ...configuration, ...(secret !== undefined && { secret }), encryptionKey: i.encryptionKey } : configuration,
    status: 'registered' as const,
    statusReason: null,
    disabledChannels: [],
    createdAt: iso(i.createdAt),
    updatedAt: iso(i.updatedAt),
    title: i.name === 'webhook' ? 'Webhook' : 'Chat',
    description: i.name === 'webhook' ? 'Built-in webhook: POST any JSON to webhookUrl, the bot gets a `webhook` event' : 'Built-in Chat API for end-user clients (@botpress/chat)',
    iconUrl: '',
    public: true,
    visibility: 'public' as const,
    verificationStatus: 'approved' as const,
    lifecycleStatus: 'published' as const,
  }
}

/** An installed integration served elsewhere, as Botpress shows it in bot.integrations[alias]: id = the definition's. */
function installationView({ integration: i, link, definition: d }: Installation, webhookBase: string) {
  return {
    id: d.id,
    name: d.name,
    version: d.version,
    enabled: i.enabled,
    webhookId: i.webhookId,
    webhookUrl: integrationWebhookUrl(webhookBase, i.webhookId),
    configurationType: link.configurationType,
    configuration: i.configuration,
    status: link.status ?? 'registered',
    statusReason: link.statusReason ?? null,
    disabledChannels: link.disabledChannels ?? [],
    createdAt: iso(i.createdAt),
    updatedAt: iso(i.updatedAt),
    title: typeof d.definition.title === 'string' ? d.definition.title : d.name,
    description: typeof d.definition.description === 'string' ? d.definition.description : '',
    iconUrl: '',
    public: false,
    visibility: 'private' as const,
    verificationStatus: 'unapproved' as const,
    lifecycleStatus: 'published' as const,
  }
}

/** Where an installed integration's webhooks arrive (any method and sub-path; relayed as webhook_received). */
/** The path under which installed integrations' webhookUrls are served. */
export const INTEGRATION_WEBHOOK_PREFIX = '/integration-webhooks'
export const integrationWebhookUrl = (base: string, webhookId: string) => `${base.replace(/\/+$/, '')}${INTEGRATION_WEBHOOK_PREFIX}/${encodeURIComponent(webhookId)}`

/** An integration definition (createIntegration…); `signingSecret` only for roles that may change it; secret values never. */
export function integrationDefinitionView(d: IntegrationDefinitionRow, showSecrets: boolean) {
  const def = d.definition as Record<string, unknown>
  const obj = (k: string, fallback: object = {}) => (def[k] ?? fallback) as Record<string, unknown>
  return {
    id: d.id,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
    name: d.name,
    version: d.version,
    url: shownUrl(d.url) ?? '',
    dev: d.dev,
    signingSecret: showSecrets ? d.signingSecret : '',
    identifier: obj('identifier'),
    configuration: obj('configuration', { schema: {}, identifier: {} }),
    // Botpress always answers these parts (the CLI's update body reads channel.message.tags, configurations.<c>.identifier).
    configurations: mapValues(obj('configurations'), (c) => ({ ...c, identifier: c.identifier ?? {} })),
    channels: mapValues(obj('channels'), (c) => ({ ...c, messages: c.messages ?? {}, message: { tags: {}, ...(c.message as object | undefined) }, conversation: { tags: {}, ...(c.conversation as object | undefined) } })),
    states: obj('states'),
    events: obj('events'),
    actions: obj('actions'),
    user: obj('user', { tags: {}, creation: { enabled: false, requiredTags: [] } }),
    entities: obj('entities'),
    interfaces: obj('interfaces'),
    attributes: obj('attributes'),
    title: typeof def.title === 'string' ? def.title : d.name,
    description: typeof def.description === 'string' ? def.description : '',
    iconUrl: '',
    readmeUrl: '',
    public: d.visibility === 'public',
    visibility: d.visibility ?? 'private',
    verificationStatus: d.workspaceId === '' ? 'approved' as const : 'unapproved' as const,
    lifecycleStatus: 'published' as const,
    sdkVersion: typeof def.sdkVersion === 'string' ? def.sdkVersion : undefined,
    secrets: Array.isArray(def.secrets) ? (def.secrets as string[]) : [],
  }
}

export const integrationApiKeyView = (k: IntegrationApiKeyRow) => ({ id: k.id, createdAt: iso(k.createdAt), note: k.note })

/**
 * The full bot. `showSecrets` (roles that may change the bot) includes each integration's
 * encryption key: whoever holds it can mint user keys for any user of that integration. `webhookBase`: the base of
 * installed integrations' webhookUrls (config.webhookPublicUrl when set).
 */
export function botView({ bot, integrations, installations, states, recurringEvents, plugins }: BotWithIntegrations, publicUrl: string, showSecrets: boolean, webhookBase = publicUrl) {
  return {
    ...botSummaryView(bot),
    description: bot.description ?? undefined,
    signingSecret: showSecrets ? bot.signingSecret : '',
    ...(bot.maxExecutionTime !== null && { maxExecutionTime: bot.maxExecutionTime }),
    /** The webchat settings (src/webchat/shared/webchat-config.ts); {} when none are set. */
    webchat: bot.webchat ?? {},
    integrations: Object.fromEntries(integrations.map((i) => {
      const installed = installations?.find((x) => x.integration.id === i.id)
      return [i.name, installed ? installationView(installed, webhookBase) : integrationView(i, publicUrl, showSecrets, bot.webchat)]
    })),
    plugins: Object.fromEntries((plugins ?? []).map((p) => [p.row.alias, botPluginView(p)])),
    user: { tags: {} },
    conversation: { tags: {} },
    message: { tags: {} },
    states: states ?? {},
    configuration: { data: {}, schema: {} },
    events: {},
    recurringEvents: recurringEvents ?? {},
    subscriptions: { events: null },
    actions: bot.actions ?? {},
    secrets: [],
    alwaysAlive: false,
    status: 'active' as const,
    medias: [],
  }
}

/** bot.plugins[alias] as @botpress/client's getBot declares it: the installation and its plugin's summary. */
function botPluginView({ row, definition }: BotPlugin) {
  const inst = row.installation as Record<string, unknown>
  const deps = ((definition?.definition.dependencies ?? {}) as Record<string, Record<string, { id?: string }> | undefined>).interfaces ?? {}
  const interfaces = Object.fromEntries(Object.entries((inst.interfaces ?? {}) as Record<string, Record<string, unknown>>)
    .map(([k, v]) => [k, { ...v, integrationAlias: v.integrationAlias ?? '', interfaceId: deps[k]?.id ?? '' }]))
  const summary = definition ? packageView(definition) : undefined
  return {
    enabled: inst.enabled !== false, name: definition?.name ?? '', version: definition?.version ?? '',
    configuration: inst.configuration ?? {}, interfaces, integrations: inst.integrations ?? {},
    id: row.pluginId, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt),
    title: summary?.title ?? '', description: summary?.description ?? '', iconUrl: '', readmeUrl: '',
    public: definition?.visibility === 'public', visibility: definition?.visibility ?? 'private', lifecycleStatus: 'published' as const,
  }
}

/** An interface or plugin definition (createInterface, createPlugin…) in @botpress/client's Interface / Plugin shape. */
export function packageView(d: PackageDefinitionRow) {
  const def = d.definition as Record<string, unknown>
  const obj = (k: string, fallback: object = {}) => (def[k] ?? fallback) as Record<string, unknown>
  const common = {
    id: d.id, createdAt: iso(d.createdAt), updatedAt: iso(d.updatedAt), name: d.name, version: d.version,
    title: typeof def.title === 'string' ? def.title : d.name,
    description: typeof def.description === 'string' ? def.description : '',
    iconUrl: '', readmeUrl: '', public: d.visibility === 'public', attributes: obj('attributes'),
    events: obj('events'), actions: obj('actions'),
    ...(typeof def.sdkVersion === 'string' && { sdkVersion: def.sdkVersion }),
  }
  if (d.kind === 'interface') {
    return { ...common, entities: obj('entities'), channels: obj('channels'), ...(def.nameTemplate !== undefined && { nameTemplate: def.nameTemplate }) }
  }
  const deps = obj('dependencies')
  return {
    ...common,
    configuration: obj('configuration', { schema: {} }), states: obj('states'),
    dependencies: { interfaces: deps.interfaces ?? {}, integrations: deps.integrations ?? {} },
    user: obj('user', { tags: {} }), conversation: obj('conversation', { tags: {} }), message: obj('message', { tags: {} }),
    visibility: d.visibility, lifecycleStatus: 'published' as const,
  }
}
