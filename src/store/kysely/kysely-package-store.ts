import type { Kysely, Selectable } from 'kysely'
import type { BotPluginRow, HostedBundleRow, HostedKind, PackageDefinitionRow, PackageKind, PackageStore, Visibility } from '../package-store.js'
import { UniqueViolation, type JsonObject } from '../store.js'
import { isUniqueViolation } from './kysely-integration-store.js'

/** The tables of migrations/<dialect>/0027_deploy_definitions.sql (kept here so schema.ts stays untouched). */
interface PackageTables {
  workspace_handles: { handle: string; workspace_id: string; created_at: number }
  package_definitions: {
    id: string; workspace_id: string; kind: string; name: string; version: string; visibility: string
    definition: string; code: string | null; created_at: number; updated_at: number
  }
  bot_plugins: { bot_id: string; alias: string; plugin_id: string; installation: string; created_at: number; updated_at: number }
  bot_bundles: { bot_id: string; code: string; deployed_at: number; version: string; token: string; key_id: string }
  /** migrations/<dialect>/0028_hosted_code.sql */
  integration_bundles: { integration_id: string; code: string; deployed_at: number; version: string; token: string; key_id: string }
}

// PostgreSQL BIGINT columns come back as strings: Number() for both engines.
const toDefinition = (r: Selectable<PackageTables['package_definitions']>): PackageDefinitionRow => ({
  id: r.id, workspaceId: r.workspace_id, kind: r.kind as PackageKind, name: r.name, version: r.version, visibility: r.visibility as Visibility,
  definition: JSON.parse(r.definition) as JsonObject, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
})

export class KyselyPackageStore implements PackageStore {
  private readonly db: Kysely<PackageTables>

  constructor(db: object) {
    this.db = db as Kysely<PackageTables>
  }

  async handleOf(workspaceId: string): Promise<string | undefined> {
    return (await this.db.selectFrom('workspace_handles').select('handle').where('workspace_id', '=', workspaceId).executeTakeFirst())?.handle
  }

  async workspaceOfHandle(handle: string): Promise<string | undefined> {
    return (await this.db.selectFrom('workspace_handles').select('workspace_id').where('handle', '=', handle).executeTakeFirst())?.workspace_id
  }

  async setHandle(workspaceId: string, handle: string, now: number): Promise<void> {
    try {
      await this.db.transaction().execute(async (tx) => {
        await tx.deleteFrom('workspace_handles').where('workspace_id', '=', workspaceId).execute()
        await tx.insertInto('workspace_handles').values({ handle, workspace_id: workspaceId, created_at: now }).execute()
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolation('Workspace handle')
      throw err
    }
  }

  async createDefinition(row: PackageDefinitionRow, code?: JsonObject): Promise<void> {
    try {
      await this.db.insertInto('package_definitions').values({
        id: row.id, workspace_id: row.workspaceId, kind: row.kind, name: row.name, version: row.version, visibility: row.visibility,
        definition: JSON.stringify(row.definition), code: code === undefined ? null : JSON.stringify(code), created_at: row.createdAt, updated_at: row.updatedAt,
      }).execute()
    } catch (err) {
      if (isUniqueViolation(err)) throw new UniqueViolation(row.kind)
      throw err
    }
  }

  async getDefinition(kind: PackageKind, id: string): Promise<PackageDefinitionRow | undefined> {
    const r = await this.db.selectFrom('package_definitions').selectAll().where('id', '=', id).where('kind', '=', kind).executeTakeFirst()
    return r && toDefinition(r)
  }

  async versionsOf(kind: PackageKind, name: string, workspaceId: string | undefined): Promise<PackageDefinitionRow[]> {
    let q = this.db.selectFrom('package_definitions').selectAll().where('kind', '=', kind).where('name', '=', name)
    q = workspaceId === undefined ? q.where('visibility', 'in', ['public', 'unlisted']) : q.where('workspace_id', '=', workspaceId)
    return (await q.orderBy('created_at').orderBy('id').limit(1000).execute()).map(toDefinition)
  }

  async updateDefinition(id: string, patch: { definition: JsonObject; visibility?: Visibility | undefined; code?: JsonObject | undefined }, now: number): Promise<PackageDefinitionRow | undefined> {
    const r = await this.db.updateTable('package_definitions').set({
      updated_at: now, definition: JSON.stringify(patch.definition),
      ...(patch.visibility !== undefined && { visibility: patch.visibility }),
      ...(patch.code !== undefined && { code: JSON.stringify(patch.code) }),
    }).where('id', '=', id).returningAll().executeTakeFirst()
    return r && toDefinition(r)
  }

  async codeOf(id: string): Promise<JsonObject | undefined> {
    const r = await this.db.selectFrom('package_definitions').select('code').where('id', '=', id).executeTakeFirst()
    return r?.code ? JSON.parse(r.code) as JsonObject : undefined
  }

  async listBotPlugins(botId: string): Promise<BotPluginRow[]> {
    const rows = await this.db.selectFrom('bot_plugins').selectAll().where('bot_id', '=', botId).orderBy('alias').execute()
    return rows.map((r) => ({
      botId: r.bot_id, alias: r.alias, pluginId: r.plugin_id, installation: JSON.parse(r.installation) as JsonObject,
      createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
    }))
  }

  async setBotPlugin(row: BotPluginRow): Promise<void> {
    const installation = JSON.stringify(row.installation)
    await this.db.insertInto('bot_plugins').values({
      bot_id: row.botId, alias: row.alias, plugin_id: row.pluginId, installation, created_at: row.createdAt, updated_at: row.updatedAt,
    }).onConflict((oc) => oc.columns(['bot_id', 'alias']).doUpdateSet({ plugin_id: row.pluginId, installation, updated_at: row.updatedAt })).execute()
  }

  async deleteBotPlugin(botId: string, alias: string): Promise<void> {
    await this.db.deleteFrom('bot_plugins').where('bot_id', '=', botId).where('alias', '=', alias).execute()
  }

  async getBundle(kind: HostedKind, ownerId: string): Promise<HostedBundleRow | undefined> {
    const r = kind === 'bot'
      ? await this.db.selectFrom('bot_bundles').select(['bot_id as owner', 'code', 'version', 'token', 'key_id', 'deployed_at']).where('bot_id', '=', ownerId).executeTakeFirst()
      : await this.db.selectFrom('integration_bundles').select(['integration_id as owner', 'code', 'version', 'token', 'key_id', 'deployed_at']).where('integration_id', '=', ownerId).executeTakeFirst()
    return r && { kind, ownerId: r.owner, code: r.code, version: r.version, token: r.token, keyId: r.key_id, deployedAt: Number(r.deployed_at) }
  }

  async setBundle(row: HostedBundleRow): Promise<void> {
    const values = { code: row.code, version: row.version, token: row.token, key_id: row.keyId, deployed_at: row.deployedAt }
    if (row.kind === 'bot') {
      await this.db.insertInto('bot_bundles').values({ bot_id: row.ownerId, ...values }).onConflict((oc) => oc.column('bot_id').doUpdateSet(values)).execute()
    } else {
      await this.db.insertInto('integration_bundles').values({ integration_id: row.ownerId, ...values }).onConflict((oc) => oc.column('integration_id').doUpdateSet(values)).execute()
    }
  }

  async deleteBundle(kind: HostedKind, ownerId: string): Promise<void> {
    if (kind === 'bot') await this.db.deleteFrom('bot_bundles').where('bot_id', '=', ownerId).execute()
    else await this.db.deleteFrom('integration_bundles').where('integration_id', '=', ownerId).execute()
  }
}
