import { registerBotScope } from '../../plugins/bot-scope.js'
import type { App } from '../../types.js'
import { TABLES_OPERATIONS } from '../../operations/index.js'
import { registerOperation } from '../../operations/routes.js'

/**
 * The Tables API under /v1/tables (the `tables` operations of @botpress/client): `Authorization: Bearer`
 * (the bot's API key, or a member token whose role allows the route's permission: tables.read for
 * viewers, tables.write for developers) and `x-bot-id` (401 when missing or unknown, 403 for another
 * bot's key or a role without the permission). Tables belong to one bot: another bot's are 404.
 * Body limit: config.tablesBodyLimit (40 MB; 413).
 */
export async function tablesRoutes(app: App): Promise<void> {
  const { config, tables } = app.services
  registerBotScope(app, { key: 'tablesBot', bodyLimit: config.tablesBodyLimit, defaultPermission: 'tables.write' })
  // One route per operation of the table (src/http/operations): the sandboxed client calls the same ones.
  for (const op of TABLES_OPERATIONS) registerOperation(app, op, (request) => ({ botId: request.tablesBot.id, tables }))
  app.addHook('onReady', async () => tables.jobs?.start())
  app.addHook('preClose', async () => tables.jobs?.stop())
}
