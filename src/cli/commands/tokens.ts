import { AdminApi } from '../admin-api.js'
import { CONNECTION_OPTIONS, type CommandSpec, type Parsed, str } from '../args.js'
import { resolveConnection } from '../connection.js'
import { err, json, out, success, table } from '../output.js'

const JSON_OPTION = { json: { type: 'boolean' as const, description: 'Print JSON (for scripts)' } }

export const tokensCreate: CommandSpec = {
  name: 'tokens create',
  summary: 'Create a personal access token for your account (its value is shown once)',
  usage: ['parley tokens create [--note TEXT] [--json]'],
  description: 'Prints the token value on stdout; keep it secret. It has the same rights as your account.',
  options: { note: { type: 'string', value: 'TEXT', description: 'What the token is for (default: "parley CLI <date>")' }, ...JSON_OPTION, ...CONNECTION_OPTIONS },
  examples: ['parley tokens create --note "CI deploys"', 'export PARLEY_TOKEN=$(parley tokens create --note ci)'],
}

export const tokensList: CommandSpec = {
  name: 'tokens list',
  summary: 'List the personal access tokens of your account (values are never shown again)',
  usage: ['parley tokens list [--json]'],
  options: { ...JSON_OPTION, ...CONNECTION_OPTIONS },
  examples: ['parley tokens list'],
}

export const tokensRevoke: CommandSpec = {
  name: 'tokens revoke',
  summary: 'Revoke a personal access token (it stops working at once)',
  usage: ['parley tokens revoke <token-id>'],
  options: { ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1, names: 'the id of the token to revoke (see `parley tokens list`)' },
  examples: ['parley tokens revoke 0193…'],
}

export async function runTokensCreate({ values }: Parsed): Promise<void> {
  const api = new AdminApi(resolveConnection(values))
  const note = str(values.note) || `parley CLI ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`
  const pat = await api.createToken(note)
  if (values.json) return void json(pat)
  out(pat.value)
  success(`Created token ${pat.id} ("${pat.note}"). This is the only time its value is shown.`)
}

export async function runTokensList({ values }: Parsed): Promise<void> {
  const api = new AdminApi(resolveConnection(values))
  const pats = await api.listTokens()
  if (values.json) return void json(pats)
  if (pats.length === 0) return void err('No tokens.')
  out(table(['ID', 'CREATED', 'NOTE'], pats.map((p) => [p.id, p.createdAt, p.note])))
}

export async function runTokensRevoke({ values, positionals }: Parsed): Promise<void> {
  const api = new AdminApi(resolveConnection(values))
  await api.deleteToken(positionals[0]!)
  success(`Revoked token ${positionals[0]}`)
}
