import { readFileSync } from 'node:fs'
import { helpText, parseCommand, type CommandSpec, type Parsed } from './args.js'
import { botsCreate, botsDelete, botsList, runBotsCreate, runBotsDelete, runBotsList } from './commands/bots.js'
import { chat, runChat } from './commands/chat.js'
import { consoleCommand, runConsole } from './commands/console.js'
import { demo, runDemo } from './commands/demo.js'
import { deploy, runDeploy } from './commands/deploy.js'
import { logs, runLogs } from './commands/logs.js'
import { runServe, serve } from './commands/serve.js'
import { runTokensCreate, runTokensList, runTokensRevoke, tokensCreate, tokensList, tokensRevoke } from './commands/tokens.js'
import { CliError, EXIT, UsageError } from './errors.js'
import { err, out, style } from './output.js'

interface Command {
  spec: CommandSpec
  run(parsed: Parsed): Promise<void>
}

const COMMANDS: Record<string, Command | Record<string, Command>> = {
  serve: { spec: serve, run: runServe },
  deploy: { spec: deploy, run: runDeploy },
  demo: { spec: demo, run: runDemo },
  chat: { spec: chat, run: runChat },
  console: { spec: consoleCommand, run: runConsole },
  logs: {
    spec: logs,
    run: (parsed) => {
      const controller = new AbortController()
      const stop = () => controller.abort()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      return runLogs(parsed, controller.signal).finally(() => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
      })
    },
  },
  bots: {
    list: { spec: botsList, run: runBotsList },
    create: { spec: botsCreate, run: runBotsCreate },
    delete: { spec: botsDelete, run: runBotsDelete },
  },
  tokens: {
    create: { spec: tokensCreate, run: runTokensCreate },
    list: { spec: tokensList, run: runTokensList },
    revoke: { spec: tokensRevoke, run: runTokensRevoke },
  },
}

const isCommand = (c: Command | Record<string, Command>): c is Command => 'spec' in c && 'run' in c

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

function mainHelp(): string {
  const rows: Array<[string, string]> = []
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (isCommand(entry)) rows.push([name, entry.spec.summary])
    else for (const [sub, command] of Object.entries(entry)) rows.push([`${name} ${sub}`, command.spec.summary])
  }
  const width = Math.max(...rows.map(([n]) => n.length))
  return [
    'parley — run and manage a Parley bot platform',
    '',
    'Usage: parley <command> [options]',
    '',
    'Commands:',
    ...rows.map(([n, s]) => `  ${n.padEnd(width)}  ${s}`),
    '',
    'Every command has --help. Commands that use the Admin API read the server URL, token and workspace from',
    '--api-url/--token/--workspace, else PARLEY_API_URL/PARLEY_TOKEN/PARLEY_WORKSPACE_ID, else the credentials.json',
    'that `parley serve` wrote in its data directory (--data-dir, PARLEY_DATA_DIR, default ./data).',
    '',
    'Exit codes: 0 success, 1 the operation failed (API error, server unreachable, code that does not load),',
    '2 the command was used wrongly (unknown flag, missing argument, nothing to connect to).',
    '',
    `Version ${version()}. Docs: docs/cli.md`,
    '',
  ].join('\n')
}

function groupHelp(name: string, group: Record<string, Command>): string {
  const width = Math.max(...Object.keys(group).map((s) => s.length))
  return [
    `parley ${name} — ${Object.keys(group).join(', ')}`,
    '',
    `Usage: parley ${name} <${Object.keys(group).join('|')}> [options]`,
    '',
    ...Object.entries(group).map(([sub, c]) => `  ${sub.padEnd(width)}  ${c.spec.summary}`),
    '',
    `Run \`parley ${name} <command> --help\` for its options.`,
    '',
  ].join('\n')
}

/** Runs the CLI; resolves with the exit code (the caller sets it; `serve` keeps the process alive). */
export async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  try {
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      const topic = first === 'help' ? rest[0] : undefined
      if (topic) return run([...rest, '--help'])
      out(mainHelp())
      return first === undefined ? EXIT.usage : EXIT.ok
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      out(version())
      return EXIT.ok
    }
    const entry = COMMANDS[first]
    if (!entry) throw new UsageError(`Unknown command "${first}"`, 'Run `parley --help` for the list of commands.')
    let command: Command
    let args: string[]
    if (isCommand(entry)) {
      command = entry
      args = rest
    } else {
      const [sub, ...subArgs] = rest
      if (sub === undefined || sub === '--help' || sub === '-h') {
        out(groupHelp(first, entry))
        return sub === undefined ? EXIT.usage : EXIT.ok
      }
      const found = entry[sub]
      if (!found) throw new UsageError(`Unknown command "${first} ${sub}"`, `Run \`parley ${first} --help\`: ${Object.keys(entry).join(', ')}.`)
      command = found
      args = subArgs
    }
    const parsed = parseCommand(command.spec, args)
    if (parsed.help) {
      out(helpText(command.spec))
      return EXIT.ok
    }
    await command.run(parsed)
    return EXIT.ok
  } catch (error) {
    const e = process.stderr
    if (error instanceof UsageError) {
      err(`${style.red(e)('error:')} ${error.message}`)
      if (error.hint) err(error.hint)
      return EXIT.usage
    }
    if (error instanceof CliError) {
      err(`${style.red(e)('error:')} ${error.message}`)
      if (error.hint) err(error.hint)
      return EXIT.failure
    }
    err(`${style.red(e)('error:')} ${error instanceof Error ? error.message : String(error)}`)
    if (process.env.PARLEY_DEBUG && error instanceof Error) err(error.stack)
    return EXIT.failure
  }
}
