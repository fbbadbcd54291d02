import { createInterface } from 'node:readline/promises'
import { AdminApi, type BotView } from '../admin-api.js'
import { CONNECTION_OPTIONS, type CommandSpec, type Parsed, str, strings } from '../args.js'
import { resolveConnection } from '../connection.js'
import { UsageError } from '../errors.js'
import { json, out, success, table } from '../output.js'

const JSON_OPTION = { json: { type: 'boolean' as const, description: 'Print JSON (for scripts)' } }

export const botsList: CommandSpec = {
  name: 'bots list',
  summary: 'List the bots of the workspace',
  usage: ['parley bots list [--json]'],
  options: { ...JSON_OPTION, ...CONNECTION_OPTIONS },
  examples: ['parley bots list', 'parley bots list --json | jq -r ".[].id"'],
}

export const botsCreate: CommandSpec = {
  name: 'bots create',
  summary: 'Create a bot with the chat integration (its webchat page and Chat API are ready at once)',
  usage: ['parley bots create [--name NAME] [--tag KEY=VALUE] [--json]'],
  options: {
    name: { type: 'string', value: 'NAME', description: 'The bot\'s name' },
    tag: { type: 'string', multiple: true, value: 'KEY=VALUE', description: 'A tag (repeat the flag for several)' },
    ...JSON_OPTION,
    ...CONNECTION_OPTIONS,
  },
  examples: ['parley bots create --name "Support bot"', 'BOT=$(parley bots create --name demo --json | jq -r .id)'],
}

export const botsDelete: CommandSpec = {
  name: 'bots delete',
  summary: 'Delete a bot with its conversations, users, messages and files',
  usage: ['parley bots delete <bot-id> [--yes]'],
  description: 'Asks for confirmation on a terminal; scripts pass --yes.',
  options: { yes: { type: 'boolean', short: 'y', description: 'Do not ask for confirmation' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1, names: 'the id of the bot to delete' },
  examples: ['parley bots delete 0193…', 'parley bots delete "$BOT" --yes'],
}

export function chatSummary(bot: BotView): string[] {
  const chat = bot.integrations?.chat
  if (!chat?.enabled) return ['  Chat:     disabled']
  return [`  Webchat:  ${chat.webchatUrl ?? '(not reported by this server)'}`, `  Chat API: ${chat.webhookUrl}`]
}

export async function runBotsList({ values }: Parsed): Promise<void> {
  const api = new AdminApi(resolveConnection(values))
  const bots = await api.listBots()
  if (values.json) return void json(bots)
  if (bots.length === 0) return void out('No bots yet. Create one with `parley bots create --name NAME`.')
  out(table(['ID', 'NAME', 'CREATED', 'DEPLOYED'], bots.map((b) => [b.id, b.name ?? '', b.createdAt, b.deployedAt ?? '-'])))
}

export async function runBotsCreate({ values }: Parsed): Promise<void> {
  const tags: Record<string, string> = {}
  for (const raw of strings(values.tag)) {
    const eq = raw.indexOf('=')
    if (eq <= 0) throw new UsageError(`--tag expects KEY=VALUE, got "${raw}"`)
    tags[raw.slice(0, eq)] = raw.slice(eq + 1)
  }
  const api = new AdminApi(resolveConnection(values))
  const name = str(values.name)
  const bot = await api.createBot({ ...(name && { name }), ...(Object.keys(tags).length && { tags }) })
  if (values.json) return void json(bot)
  out(bot.id)
  success(`Created bot "${bot.name}"`)
  for (const line of chatSummary(bot)) process.stderr.write(line + '\n')
  process.stderr.write(`  Deploy code to it with: parley deploy ./bot.ts --bot ${bot.id}\n`)
}

export async function runBotsDelete({ values, positionals }: Parsed): Promise<void> {
  const id = positionals[0]!
  const api = new AdminApi(resolveConnection(values))
  if (!values.yes) {
    if (!process.stdin.isTTY) throw new UsageError(`Refusing to delete bot ${id} without confirmation`, 'Pass --yes to delete without asking.')
    const bot = await api.getBot(id)
    const rl = createInterface({ input: process.stdin, output: process.stderr })
    const answer = await rl.question(`Delete bot "${bot.name}" (${id}) with all its conversations? Type "yes": `)
    rl.close()
    if (answer.trim().toLowerCase() !== 'yes') throw new UsageError('Not deleted')
  }
  await api.deleteBot(id)
  success(`Deleted bot ${id}`)
}
