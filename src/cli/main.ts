import { readFileSync } from 'node:fs'
import { helpText, parseCommand, type CommandSpec, type Parsed } from './args.js'
import { CliError, EXIT, UsageError } from './errors.js'
import { err, out, style } from './output.js'

interface Command {
  spec: CommandSpec
  run(parsed: Parsed): Promise<void>
}

/**
 * A command's module is imported when the command runs (or help lists it): `parley serve` does not hold the client
 * commands (the Admin API client, the terminal chat) in the server's memory (idle memory, #16).
 */
type LoadCommand = () => Promise<Command>

const COMMANDS: Record<string, LoadCommand | Record<string, LoadCommand>> = {
  serve: async () => {
    const m = await import('./commands/serve.js')
    return { spec: m.serve, run: m.runServe }
  },
  deploy: async () => {
    const m = await import('./commands/deploy.js')
    return { spec: m.deploy, run: m.runDeploy }
  },
  demo: async () => {
    const m = await import('./commands/demo.js')
    return { spec: m.demo, run: m.runDemo }
  },
  chat: async () => {
    const m = await import('./commands/chat.js')
    return { spec: m.chat, run: m.runChat }
  },
  console: async () => {
    const m = await import('./commands/console.js')
    return { spec: m.consoleCommand, run: m.runConsole }
  },
  logs: async () => {
    const m = await import('./commands/logs.js')
    return {
      spec: m.logs,
      run: (parsed) => {
        const controller = new AbortController()
        const stop = () => controller.abort()
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
        return m.runLogs(parsed, controller.signal).finally(() => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
        })
      },
    }
  },
  bots: {
    list: async () => {
      const m = await import('./commands/bots.js')
      return { spec: m.botsList, run: m.runBotsList }
    },
    create: async () => {
      const m = await import('./commands/bots.js')
      return { spec: m.botsCreate, run: m.runBotsCreate }
    },
    delete: async () => {
      const m = await import('./commands/bots.js')
      return { spec: m.botsDelete, run: m.runBotsDelete }
    },
  },
  tokens: {
    create: async () => {
      const m = await import('./commands/tokens.js')
      return { spec: m.tokensCreate, run: m.runTokensCreate }
    },
    list: async () => {
      const m = await import('./commands/tokens.js')
      return { spec: m.tokensList, run: m.runTokensList }
    },
    revoke: async () => {
      const m = await import('./commands/tokens.js')
      return { spec: m.tokensRevoke, run: m.runTokensRevoke }
    },
  },
}

const isCommand = (c: LoadCommand | Record<string, LoadCommand>): c is LoadCommand => typeof c === 'function'

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

async function mainHelp(): Promise<string> {
  const rows: Array<[string, string]> = []
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (isCommand(entry)) rows.push([name, (await entry()).spec.summary])
    else for (const [sub, load] of Object.entries(entry)) rows.push([`${name} ${sub}`, (await load()).spec.summary])
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

async function groupHelp(name: string, group: Record<string, LoadCommand>): Promise<string> {
  const width = Math.max(...Object.keys(group).map((s) => s.length))
  const summaries = await Promise.all(Object.values(group).map(async (load) => (await load()).spec.summary))
  return [
    `parley ${name} — ${Object.keys(group).join(', ')}`,
    '',
    `Usage: parley ${name} <${Object.keys(group).join('|')}> [options]`,
    '',
    ...Object.keys(group).map((sub, i) => `  ${sub.padEnd(width)}  ${summaries[i]}`),
    '',
    `Run \`parley ${name} <command> --help\` for its options.`,
    '',
  ].join('\n')
}

/** The command `argv` names (`bots create`, `serve`, …) and the arguments after its name; a UsageError names what is unknown. */
export async function findCommand(argv: string[]): Promise<{ command: Command; args: string[] }> {
  const [first = '', ...rest] = argv
  const entry = COMMANDS[first]
  if (!entry) throw new UsageError(`Unknown command "${first}"`, 'Run `parley --help` for the list of commands.')
  if (isCommand(entry)) return { command: await entry(), args: rest }
  const [sub = '', ...subArgs] = rest
  const found = entry[sub]
  if (!found) throw new UsageError(`Unknown command "${first} ${sub}"`, `Run \`parley ${first} --help\`: ${Object.keys(entry).join(', ')}.`)
  return { command: await found(), args: subArgs }
}

/** Runs the CLI; resolves with the exit code (the caller sets it; `serve` keeps the process alive). */
export async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  try {
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      const topic = first === 'help' ? rest[0] : undefined
      if (topic) return run([...rest, '--help'])
      out(await mainHelp())
      return first === undefined ? EXIT.usage : EXIT.ok
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      out(version())
      return EXIT.ok
    }
    const entry = COMMANDS[first]
    if (entry && !isCommand(entry) && (rest[0] === undefined || rest[0] === '--help' || rest[0] === '-h')) {
      out(await groupHelp(first, entry))
      return rest[0] === undefined ? EXIT.usage : EXIT.ok
    }
    const { command, args } = await findCommand(argv)
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
