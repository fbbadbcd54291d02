import type { JsonObject } from './rows.js'

/**
 * What `bp deploy` stores besides bots and integrations (migrations/<dialect>/0027_deploy_definitions.sql):
 * workspace handles, interface and plugin definitions, a bot's plugins and a bot's CommonJS bundle.
 */
export type PackageKind = 'interface' | 'plugin'
export type Visibility = 'private' | 'public' | 'unlisted'

export interface PackageDefinitionRow {
  id: string
  workspaceId: string
  kind: PackageKind
  name: string
  version: string
  visibility: Visibility
  /** The definition as given (title, description, entities, events, actions, channels, configuration, dependencies, icon, readme…). */
  definition: JsonObject
  createdAt: number
  updatedAt: number
}

export interface BotPluginRow {
  botId: string
  alias: string
  pluginId: string
  /** configuration, interfaces, integrations, enabled… as updateBot gave them. */
  installation: JsonObject
  createdAt: number
  updatedAt: number
}

/** Who a hosted bundle belongs to: a bot, or one integration version (its definition). */
export type HostedKind = 'bot' | 'integration'

/** A deployed CommonJS bundle, run as hosted code (src/runtime/hosted/). */
export interface HostedBundleRow {
  kind: HostedKind
  /** The bot's id, or the integration definition's. */
  ownerId: string
  code: string
  /** New at each deploy: a process runs one version, and the next deploy swaps it. */
  version: string
  /** The API key its process calls Parley with (BP_TOKEN): its value, and its key row (a bot's or an integration's key). */
  token: string
  keyId: string
  deployedAt: number
}

export interface PackageStore {
  // ---- workspace handles ----
  handleOf(workspaceId: string): Promise<string | undefined>
  /** The workspace holding a handle. */
  workspaceOfHandle(handle: string): Promise<string | undefined>
  /** Sets (replacing) a workspace's handle; UniqueViolation when another workspace holds it. */
  setHandle(workspaceId: string, handle: string, now: number): Promise<void>

  // ---- interface and plugin definitions ----
  /** UniqueViolation when the workspace has this kind, name and version already. */
  createDefinition(row: PackageDefinitionRow, code?: JsonObject): Promise<void>
  getDefinition(kind: PackageKind, id: string): Promise<PackageDefinitionRow | undefined>
  /** All versions of a name: in the workspace, or (workspaceId undefined) public and unlisted ones of any workspace. */
  versionsOf(kind: PackageKind, name: string, workspaceId: string | undefined): Promise<PackageDefinitionRow[]>
  updateDefinition(id: string, patch: { definition: JsonObject; visibility?: Visibility | undefined; code?: JsonObject | undefined }, now: number): Promise<PackageDefinitionRow | undefined>
  /** A plugin's bundles ({ node, browser }). */
  codeOf(id: string): Promise<JsonObject | undefined>

  // ---- a bot's plugins ----
  listBotPlugins(botId: string): Promise<BotPluginRow[]>
  setBotPlugin(row: BotPluginRow): Promise<void>
  deleteBotPlugin(botId: string, alias: string): Promise<void>

  // ---- a bot's or an integration version's CommonJS bundle (hosted code, #26 item 2; migrations 0028) ----
  getBundle(kind: HostedKind, ownerId: string): Promise<HostedBundleRow | undefined>
  /** Inserts or replaces the owner's bundle. */
  setBundle(row: HostedBundleRow): Promise<void>
  deleteBundle(kind: HostedKind, ownerId: string): Promise<void>
}
