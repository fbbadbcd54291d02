import { AdminApi } from '../admin-api.js'
import { CONNECTION_OPTIONS, type CommandSpec, type Parsed } from '../args.js'
import { resolveConnection } from '../connection.js'
import { json, out, success } from '../output.js'

export const consoleCommand: CommandSpec = {
  name: 'console',
  summary: 'Print a one-time link that signs you in to the web console (/console)',
  usage: ['parley console [--json]'],
  description: 'The link works once, for PARLEY_CONSOLE_LINK_MINUTES (15 by default); open it in a browser. Anyone with the link can sign in as you until then: do not share it.',
  options: { json: { type: 'boolean' as const, description: 'Print JSON (for scripts)' }, ...CONNECTION_OPTIONS },
  examples: ['parley console'],
}

export async function runConsole({ values }: Parsed): Promise<void> {
  const api = new AdminApi(resolveConnection(values))
  const link = await api.createConsoleLink()
  if (values.json) return void json(link)
  out(link.url)
  success(`Open this link in a browser to sign in to the console (it works once, until ${link.expiresAt}).`)
}
