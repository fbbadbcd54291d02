import type { Generated, Kysely, Selectable } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type {
  InstallationRow, InstallationStatus, IntegrationApiKeyRow, IntegrationDefinitionPatch, IntegrationDefinitionRow, IntegrationLogRow, IntegrationStore,
} from '../integration-store.js'
import type { Visibility } from '../package-store.js'
import { UniqueViolation, type JsonObject, type Page, type PageRequest } from '../store.js'

/** The tables of migrations/<dialect>/0012_integration_definitions.sql (kept here so schema.ts stays untouched). */
interface IntegrationTables {
  integration_definitions: {
    id: string; workspace_id: string; name: string; version: string; url: string | null; dev: number
    signing_secret: string; definition: string; created_at: number; updated_at: number
    /** migrations/<dialect>/0027_deploy_definitions.sql */
    visibility: Generated<string>
  }
  integration_api_keys: { id: string; definition_id: string; token_hash: string; note: string; created_at: number }
  integration_installations: { integration_id: string; definition_id: string; configuration_type: string | null; disabled_channels: Generated<string>; status: Generated<string>; status_reason: Generated<string | null> }
  /** migrations/<dialect>/0017_integration_operations.sql */
  integration_secrets: { definition_id: string; name: string; value: string }
  integration_logs: { id: string; definition_id: string; bot_id: string | null; at: number; level: string; message: string; conversation_id: string | null }
}

/** A unique or primary-key violation on either engine. */
export const isUniqueViolation = (err: unknown) => {
  const code = (err as { code?: unknown } | undefined)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}

// PostgreSQL BIGINT columns come back as strings: Number() for both engines.
const toDefinition = (r: Selectable<IntegrationTables['integration_definitions']>): IntegrationDefinitionRow => ({
  id: r.id, workspaceId: r.workspace_id, name: r.name, version: r.version, url: r.url, dev: Number(r.dev) === 1,
  signingSecret: r.signing_secret, definition: JSON.parse(r.definition) as JsonObject, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
  visibility: r.visibility as Visibility,
})

export class KyselyIntegrationStore implements IntegrationStore {
  private readonly db: Kysely<IntegrationTables>

  constructor(db: object) {
    this.db = db as Kysely<IntegrationTables>
  }

  async createDefinition(row: IntegrationDefinitionRow): Promise<void> {
    try {
      await this.db.insertInto('integration_definitions').values({
        id: row.id, workspace_id: row.workspaceId, name: row.name, version: row.version, url: row.url, dev: row.dev ? 1 : 0,
        signing_secret: row.signingSecret, definition: JSON.stringify(row.definition), created_at: row.createdAt, updated_at: row.updatedAt,
        visibility: row.visibility ?? 'private',
      }).execute()
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolation('Integration')
      throw err
    }
  }

  async getDefinition(id: string): Promise<IntegrationDefinitionRow | undefined> {
    const r = await this.db.selectFrom('integration_definitions').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toDefinition(r)
  }

  async findDefinition(workspaceId: string, name: string, version?: string): Promise<IntegrationDefinitionRow | undefined> {
    let q = this.db.selectFrom('integration_definitions').selectAll().where('workspace_id', '=', workspaceId).where('name', '=', name)
    if (version !== undefined) q = q.where('version', '=', version)
    const r = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst()
    return r && toDefinition(r)
  }

  async definitionVersions(name: string, workspaceId: string | undefined): Promise<IntegrationDefinitionRow[]> {
    let q = this.db.selectFrom('integration_definitions').selectAll().where('name', '=', name)
    q = workspaceId === undefined ? q.where('visibility', 'in', ['public', 'unlisted']) : q.where('workspace_id', '=', workspaceId)
    return (await q.orderBy('created_at').orderBy('id').limit(1000).execute()).map(toDefinition)
  }

  async listDefinitions(workspaceId: string, filter: { name?: string | undefined; version?: string | undefined; dev?: boolean | undefined }, page: PageRequest): Promise<Page<IntegrationDefinitionRow>> {
    let q = this.db.selectFrom('integration_definitions').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.name !== undefined) q = q.where('name', '=', filter.name)
    if (filter.version !== undefined) q = q.where('version', '=', filter.version)
    if (filter.dev !== undefined) q = q.where('dev', '=', filter.dev ? 1 : 0)
    if (page.after !== undefined) {
      const [id] = decodeCursor(page.after, ['string']) as [string]
      q = q.where('id', '>', id)
    }
    const rows = (await q.orderBy('id').limit(page.limit + 1).execute()).map(toDefinition)
    if (rows.length <= page.limit) return { items: rows }
    const items = rows.slice(0, page.limit)
    return { items, next: encodeCursor([items[items.length - 1]!.id]) }
  }

  async updateDefinition(id: string, patch: IntegrationDefinitionPatch, now: number): Promise<IntegrationDefinitionRow | undefined> {
    const r = await this.db.updateTable('integration_definitions').set({
      updated_at: now,
      ...(patch.url !== undefined && { url: patch.url }),
      ...(patch.dev !== undefined && { dev: patch.dev ? 1 : 0 }),
      ...(patch.visibility !== undefined && { visibility: patch.visibility }),
      ...(patch.definition !== undefined && { definition: JSON.stringify(patch.definition) }),
    }).where('id', '=', id).returningAll().executeTakeFirst()
    return r && toDefinition(r)
  }

  async deleteDefinition(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('integration_definitions').where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async createApiKey(row: IntegrationApiKeyRow & { tokenHash: string }): Promise<void> {
    await this.db.insertInto('integration_api_keys').values({
      id: row.id, definition_id: row.definitionId, token_hash: row.tokenHash, note: row.note, created_at: row.createdAt,
    }).execute()
  }

  async findApiKeyByHash(tokenHash: string): Promise<IntegrationApiKeyRow | undefined> {
    const r = await this.db.selectFrom('integration_api_keys').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
    return r && { id: r.id, definitionId: r.definition_id, note: r.note, createdAt: Number(r.created_at) }
  }

  async listApiKeys(definitionId: string): Promise<IntegrationApiKeyRow[]> {
    const rows = await this.db.selectFrom('integration_api_keys').selectAll().where('definition_id', '=', definitionId).orderBy('created_at').orderBy('id').execute()
    return rows.map((r) => ({ id: r.id, definitionId: r.definition_id, note: r.note, createdAt: Number(r.created_at) }))
  }

  async deleteApiKey(definitionId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('integration_api_keys').where('definition_id', '=', definitionId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async setInstallation(row: InstallationRow): Promise<void> {
    const disabled = row.disabledChannels === undefined ? undefined : JSON.stringify(row.disabledChannels)
    await this.db.insertInto('integration_installations').values({
      integration_id: row.integrationId, definition_id: row.definitionId, configuration_type: row.configurationType,
      ...(disabled !== undefined && { disabled_channels: disabled }),
    }).onConflict((oc) => oc.column('integration_id').doUpdateSet({
      definition_id: row.definitionId, configuration_type: row.configurationType, ...(disabled !== undefined && { disabled_channels: disabled }),
    })).execute()
  }

  async installationsOf(integrationIds: string[]): Promise<InstallationRow[]> {
    if (integrationIds.length === 0) return []
    const rows = await this.db.selectFrom('integration_installations').selectAll().where('integration_id', 'in', integrationIds).execute()
    return rows.map((r) => ({
      integrationId: r.integration_id, definitionId: r.definition_id, configurationType: r.configuration_type,
      disabledChannels: JSON.parse(r.disabled_channels) as string[],
      status: r.status as InstallationStatus, statusReason: r.status_reason,
    }))
  }

  async setInstallationStatus(integrationId: string, status: InstallationStatus, reason: string | null): Promise<void> {
    await this.db.updateTable('integration_installations').set({ status, status_reason: reason }).where('integration_id', '=', integrationId).execute()
  }

  async countInstallations(definitionId: string): Promise<number> {
    const r = await this.db.selectFrom('integration_installations').select((eb) => eb.fn.countAll().as('n')).where('definition_id', '=', definitionId).executeTakeFirst()
    return Number(r?.n ?? 0)
  }

  async setSecrets(definitionId: string, patch: Record<string, string | null>): Promise<void> {
    for (const [name, value] of Object.entries(patch)) {
      if (value === null) {
        await this.db.deleteFrom('integration_secrets').where('definition_id', '=', definitionId).where('name', '=', name).execute()
      } else {
        await this.db.insertInto('integration_secrets').values({ definition_id: definitionId, name, value })
          .onConflict((oc) => oc.columns(['definition_id', 'name']).doUpdateSet({ value })).execute()
      }
    }
  }

  async getSecrets(definitionId: string): Promise<Record<string, string>> {
    const rows = await this.db.selectFrom('integration_secrets').select(['name', 'value']).where('definition_id', '=', definitionId).orderBy('name').execute()
    return Object.fromEntries(rows.map((r) => [r.name, r.value]))
  }

  async appendLogs(rows: IntegrationLogRow[]): Promise<void> {
    if (rows.length === 0) return
    await this.db.insertInto('integration_logs').values(rows.map((l) => ({
      id: l.id, definition_id: l.definitionId, bot_id: l.botId, at: l.at, level: l.level, message: l.message, conversation_id: l.conversationId,
    }))).execute()
  }

  async listLogs(definitionId: string, range: { from?: number | undefined; to?: number | undefined; level?: string | undefined; conversationId?: string | undefined }, page: PageRequest): Promise<Page<IntegrationLogRow>> {
    let q = this.db.selectFrom('integration_logs').selectAll().where('definition_id', '=', definitionId)
    if (range.from !== undefined) q = q.where('at', '>=', range.from)
    if (range.to !== undefined) q = q.where('at', '<=', range.to)
    if (range.level !== undefined) q = q.where('level', '=', range.level)
    if (range.conversationId !== undefined) q = q.where('conversation_id', '=', range.conversationId)
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('at', '>', at), eb.and([eb('at', '=', at), eb('id', '>', id)])]))
    }
    const rows = (await q.orderBy('at').orderBy('id').limit(page.limit + 1).execute()).map((r): IntegrationLogRow => ({
      id: r.id, definitionId: r.definition_id, botId: r.bot_id, at: Number(r.at), level: r.level, message: r.message, conversationId: r.conversation_id,
    }))
    if (rows.length <= page.limit) return { items: rows }
    const items = rows.slice(0, page.limit)
    return { items, next: encodeCursor([items[items.length - 1]!.at, items[items.length - 1]!.id]) }
  }
}
