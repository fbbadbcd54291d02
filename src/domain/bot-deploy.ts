import { errors } from '../lib/errors.js'
import type { BotPluginRow, PackageDefinitionRow } from '../store/package-store.js'
import type { BotRow, JsonObject, Store } from '../store/store.js'
import { ALIAS, isObject } from './integration-service.js'
import { isBundle } from './hosted-code.js'

/**
 * What `bp deploy` sends to updateBot besides the definition (issue #26 item 1): its `code` (a CommonJS bundle,
 * not a Parley module) and its `plugins`.
 *
 * Telling the two kinds of code apart, by the text: code that assigns `module.exports` (esbuild's CommonJS output,
 * which `bp build` makes, always does) and has no ES `export` statement is a bundle. It is kept (bot_bundles) for
 * hosted code (#26 item 2), never loaded in the sandbox (a bundle of the SDK takes seconds to evaluate there), and
 * the bot's sandbox code is cleared. Anything else is a Parley module, checked in the sandbox as before: one that does
 * not load (even one that calls require()) is refused with its load error, and the previous code stays live.
 */
export interface DeployedCode {
  /** A Parley module: goes live in the sandbox (and a kept bundle is dropped). */
  module?: string | undefined
  /** A CommonJS bundle: kept for hosted code; the sandbox code is cleared. */
  bundle?: string | undefined
}

export async function classifyCode(code: string | undefined, check: ((code: string) => Promise<string | undefined>) | undefined): Promise<DeployedCode> {
  if (code === undefined) return {}
  if (isBundle(code)) return { bundle: code }
  const error = check ? await check(code) : undefined
  if (error) throw errors.invalidPayload(`Bot code does not load: ${error}`)
  return { module: code }
}

/** Where a plugin id is looked up (PackageService.usable): the workspace's own, or a public or unlisted one. */
export interface PluginLookup {
  usable(workspaceId: string, kind: 'plugin', id: string): Promise<PackageDefinitionRow | undefined>
}

export interface BotPlugin { row: BotPluginRow; definition: PackageDefinitionRow | undefined }


/** A bot's plugins: updateBot({ plugins: { <alias>: { id, enabled, configuration, interfaces, integrations } | null } }). */
export class BotPlugins {
  constructor(private readonly store: Store, private readonly lookup: PluginLookup) {}

  /** Checks every entry first, so a refused one changes nothing. */
  async apply(bot: BotRow, input: unknown, now: number): Promise<void> {
    if (input === undefined || input === null) return
    if (!isObject(input)) throw errors.invalidPayload('plugins must be an object of plugin aliases')
    const current = new Map((await this.store.packages.listBotPlugins(bot.id)).map((p) => [p.alias, p]))
    const writes: BotPluginRow[] = []
    for (const [alias, value] of Object.entries(input)) {
      if (!ALIAS.test(alias)) throw errors.invalidPayload(`plugins: "${alias.slice(0, 100)}" is not a plugin alias (lowercase letters, digits, - and _, starting with a letter)`)
      if (value === null) continue
      if (!isObject(value) || typeof value.id !== 'string') throw errors.invalidPayload(`plugins.${alias}.id must be the id of a plugin (getPluginByName or getPublicPlugin)`)
      const definition = await this.lookup.usable(bot.workspaceId, 'plugin', value.id)
      if (!definition) throw errors.referenceNotFound(`plugins.${alias}: plugin "${value.id.slice(0, 200)}" not found`)
      for (const part of ['configuration', 'interfaces', 'integrations'] as const) {
        if (value[part] !== undefined && value[part] !== null && !isObject(value[part])) throw errors.invalidPayload(`plugins.${alias}.${part} must be an object`)
      }
      const installation: JsonObject = {
        enabled: value.enabled !== false,
        configuration: (value.configuration ?? {}) as JsonObject,
        interfaces: (value.interfaces ?? {}) as JsonObject,
        integrations: (value.integrations ?? {}) as JsonObject,
      }
      writes.push({ botId: bot.id, alias, pluginId: definition.id, installation, createdAt: current.get(alias)?.createdAt ?? now, updatedAt: now })
    }
    for (const [alias, value] of Object.entries(input)) if (value === null && current.has(alias)) await this.store.packages.deleteBotPlugin(bot.id, alias)
    for (const row of writes) await this.store.packages.setBotPlugin(row)
  }

  async list(botId: string): Promise<BotPlugin[]> {
    const rows = await this.store.packages.listBotPlugins(botId)
    return Promise.all(rows.map(async (row) => ({ row, definition: await this.store.packages.getDefinition('plugin', row.pluginId) })))
  }
}
