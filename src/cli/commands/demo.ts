import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { AdminApi, AdminApiError } from '../admin-api.js'
import { CONNECTION_OPTIONS, type CommandSpec, type Parsed, str } from '../args.js'
import { resolveConnection } from '../connection.js'
import { err, out, success } from '../output.js'
import { demoBotCode } from '../../domain/demo-bot.js'

export const demo: CommandSpec = {
  name: 'demo',
  summary: 'Restore the demo bot: its original code, on the demo bot of credentials.json (re-created if it was deleted)',
  usage: ['parley demo [--bot ID]'],
  description: [
    'Deploys the demo bot\'s code (the one created at first start) again. Its images, audio and PDF are served by the',
    'server itself (/demo/assets/…), at the server\'s address in credentials.json (apiUrl). If the demo bot was',
    'deleted, a new "Demo bot" is created and credentials.json is updated (botId, chat). --bot ID restores the demo',
    'code onto another bot.',
  ].join('\n'),
  options: {
    bot: { type: 'string', value: 'ID', description: 'The bot to put the demo code on (default: the demo bot of credentials.json)' },
    ...CONNECTION_OPTIONS,
  },
  examples: ['parley demo', 'parley demo --bot 0193…'],
}

export async function runDemo({ values }: Parsed): Promise<void> {
  const connection = resolveConnection(values)
  const api = new AdminApi(connection)
  const code = demoBotCode(connection.apiUrl)
  const named = str(values.bot) || connection.credentials?.botId
  if (named) {
    try {
      const bot = await api.updateBot(named, { code })
      success(`Restored the demo code on "${bot.name}" (${bot.id})`)
      const chat = bot.integrations?.chat
      if (chat?.enabled && chat.webchatUrl) err(`  Talk to it: ${chat.webchatUrl}   or   parley chat`)
      out(bot.id)
      return
    } catch (error) {
      // The demo bot was deleted: make a new one (below). A bot named with --bot must exist.
      if (!(error instanceof AdminApiError && error.status === 404) || str(values.bot)) throw error
    }
  }
  const created = await api.createBot({ name: 'Demo bot' })
  const bot = await api.updateBot(created.id, { code })
  const chat = bot.integrations?.chat
  if (connection.credentials) {
    // credentials.json names the new demo bot (written whole, then renamed: never half a file).
    const path = connection.credentialsPath
    const current = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
    const next = { ...current, botId: bot.id, ...(chat && { chat: { ...(current.chat as object), webhookId: chat.webhookId, url: chat.webhookUrl, ...(chat.webchatUrl && { webchatUrl: chat.webchatUrl }), ...(chat.configuration?.encryptionKey && { encryptionKey: chat.configuration.encryptionKey }) } }) }
    writeFileSync(`${path}.tmp`, JSON.stringify(next, null, 2) + '\n', { mode: 0o600 })
    renameSync(`${path}.tmp`, path)
    err(`  ${path} now names it`)
  }
  success(`Created a new demo bot "${bot.name}" (${bot.id}) with the demo code`)
  if (chat?.enabled && chat.webchatUrl) err(`  Talk to it: ${chat.webchatUrl}   or   parley chat`)
  out(bot.id)
}
