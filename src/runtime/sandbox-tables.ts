/**
 * The table operations of the sandboxed bot's client (docs/bot-code.md, "Tables"): the Tables API's operations
 * of the table (src/http/operations), on the bot's own tables, with the routes' validation and errors.
 */
import type { TablesService } from '../domain/tables-service.js'
import { TABLES_OPERATIONS } from '../http/operations/index.js'
import { callOperation } from '../http/operations/operation.js'
import type { BotRow } from '../store/store.js'
import { byName } from './sandbox-client.js'

const TABLES = byName(TABLES_OPERATIONS)

/** A table operation of the sandboxed client, or undefined for any other method. */
export function sandboxTableCall(tables: TablesService, bot: BotRow, method: string, a: Record<string, unknown>): Promise<unknown> | undefined {
  const op = TABLES.get(method)
  return op && callOperation(op, { botId: bot.id, tables }, a)
}
