import type { Visibility } from './package-store.js'
import type { JsonObject, Page, PageRequest } from './rows.js'

/**
 * Integrations served elsewhere (migrations/<dialect>/0012_integration_definitions.sql): their
 * definitions (createIntegration, private to a workspace), their API keys (the token they call the
 * Runtime API with), which of a bot's integrations run which definition (installations), and their logs.
 * An installation is an ordinary row of the bot's integrations (its name is the alias): users,
 * conversations and messages it creates are scoped by that row's id like the chat integration's.
 */
export interface IntegrationDefinitionRow {
  id: string
  workspaceId: string
  name: string
  version: string
  url: string | null
  dev: boolean
  /** Signs the requests Parley sends to the integration (x-parley-signature, src/lib/signature.ts). */
  signingSecret: string
  /** The rest of the definition as given (channels, actions, events, states, configuration(s), user, title…); secret names only. */
  definition: JsonObject
  createdAt: number
  updatedAt: number
  /** public and unlisted definitions are found by every workspace's hub routes (getPublicIntegration; migrations 0027). */
  visibility?: Visibility | undefined
}

export interface IntegrationApiKeyRow { id: string; definitionId: string; note: string; createdAt: number }

export interface InstallationRow {
  integrationId: string
  definitionId: string
  configurationType: string | null
  /** Channels the bot may not use (updateBot integrations.<alias>.disabledChannels; migrations 0017). Kept as is when omitted. */
  disabledChannels?: string[] | undefined
  /** The outcome of its last register (migrations 0025): `registered`, or `registration_failed` with `statusReason`. */
  status?: InstallationStatus | undefined
  statusReason?: string | null | undefined
}

export type InstallationStatus = 'registered' | 'registration_failed'

export interface IntegrationLogRow {
  id: string
  definitionId: string
  botId: string | null
  at: number
  level: string
  message: string
  conversationId: string | null
}

export interface IntegrationDefinitionPatch {
  url?: string | null | undefined
  dev?: boolean | undefined
  definition?: JsonObject | undefined
  visibility?: Visibility | undefined
}

export interface IntegrationStore {
  /** UniqueViolation when the workspace has this name and version already. */
  createDefinition(row: IntegrationDefinitionRow): Promise<void>
  getDefinition(id: string): Promise<IntegrationDefinitionRow | undefined>
  /** The definition of this name and version in the workspace (any version: the latest created). */
  findDefinition(workspaceId: string, name: string, version?: string): Promise<IntegrationDefinitionRow | undefined>
  /** All versions of a name: in the workspace, or (workspaceId undefined) the public and unlisted ones of every workspace. */
  definitionVersions(name: string, workspaceId: string | undefined): Promise<IntegrationDefinitionRow[]>
  listDefinitions(workspaceId: string, filter: { name?: string | undefined; version?: string | undefined; dev?: boolean | undefined }, page: PageRequest): Promise<Page<IntegrationDefinitionRow>>
  updateDefinition(id: string, patch: IntegrationDefinitionPatch, now: number): Promise<IntegrationDefinitionRow | undefined>
  deleteDefinition(id: string): Promise<boolean>

  createApiKey(row: IntegrationApiKeyRow & { tokenHash: string }): Promise<void>
  findApiKeyByHash(tokenHash: string): Promise<IntegrationApiKeyRow | undefined>
  listApiKeys(definitionId: string): Promise<IntegrationApiKeyRow[]>
  deleteApiKey(definitionId: string, id: string): Promise<boolean>

  /** Links one of a bot's integrations to a definition (replacing its link). */
  setInstallation(row: InstallationRow): Promise<void>
  /** Records the outcome of an installation's register (getBot integrations.<alias>.status / statusReason). */
  setInstallationStatus(integrationId: string, status: InstallationStatus, reason: string | null): Promise<void>
  /** The links of these integrations (the others are built-in). */
  installationsOf(integrationIds: string[]): Promise<InstallationRow[]>
  /** How many bots' integrations run this definition. */
  countInstallations(definitionId: string): Promise<number>

  /** Sets (string) or removes (null) secret values of a definition (migrations 0017). */
  setSecrets(definitionId: string, patch: Record<string, string | null>): Promise<void>
  /** A definition's secret values: for the integration itself only, never for an API response. */
  getSecrets(definitionId: string): Promise<Record<string, string>>

  appendLogs(rows: IntegrationLogRow[]): Promise<void>
  listLogs(definitionId: string, range: { from?: number | undefined; to?: number | undefined; level?: string | undefined; conversationId?: string | undefined }, page: PageRequest): Promise<Page<IntegrationLogRow>>
}
