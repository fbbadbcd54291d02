import { registerBotScope } from '../../plugins/bot-scope.js'
import type { App } from '../../types.js'
import listTables from './list-tables.js'
import getTable from './get-table.js'
import getOrCreateTable from './get-or-create-table.js'
import createTable from './create-table.js'
import duplicateTable from './duplicate-table.js'
import exportTable from './export-table.js'
import importTable from './import-table.js'
import getTableJobs from './get-table-jobs.js'
import updateTable from './update-table.js'
import renameTableColumn from './rename-table-column.js'
import deleteTable from './delete-table.js'
import getTableRow from './get-table-row.js'
import findTableRows from './find-table-rows.js'
import createTableRows from './create-table-rows.js'
import updateTableRows from './update-table-rows.js'
import upsertTableRows from './upsert-table-rows.js'
import deleteTableRows from './delete-table-rows.js'

const routes: ((app: App) => void)[] = [
  listTables, getTable, getOrCreateTable, createTable, duplicateTable, exportTable, importTable, getTableJobs,
  updateTable, renameTableColumn, deleteTable,
  getTableRow, findTableRows, createTableRows, updateTableRows, upsertTableRows, deleteTableRows,
]

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
  for (const route of routes) route(app)
  app.addHook('onReady', async () => tables.jobs?.start())
  app.addHook('preClose', async () => tables.jobs?.stop())
}
