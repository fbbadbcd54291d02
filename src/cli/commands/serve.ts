import { type CommandSpec, type Parsed, str } from '../args.js'
import { UsageError } from '../errors.js'

export const serve: CommandSpec = {
  name: 'serve',
  summary: 'Start the Parley server (what `npm start` runs)',
  usage: ['parley serve [--port N] [--host HOST] [--data-dir DIR] [--database-url URL]'],
  description: [
    'Flags override the environment variables of the same meaning (docs/operating.md lists them all).',
    'The first start creates a workspace, an access token and a demo bot, prints them with the webchat address,',
    'and writes them to DIR/credentials.json. SIGTERM or Ctrl-C stops it gracefully.',
  ].join('\n'),
  options: {
    port: { type: 'string', short: 'p', value: 'N', description: 'HTTP port (env PORT; default 3000)' },
    host: { type: 'string', value: 'HOST', description: 'Interface to bind (env HOST; default 127.0.0.1; 0.0.0.0 to expose)' },
    'data-dir': { type: 'string', value: 'DIR', description: 'Database, files and credentials.json (env PARLEY_DATA_DIR; default ./data)' },
    'database-url': { type: 'string', value: 'URL', description: 'postgres://… to use PostgreSQL instead of SQLite (env PARLEY_DATABASE_URL)' },
    'public-url': { type: 'string', value: 'URL', description: 'Base URL clients use, behind a proxy (env PARLEY_PUBLIC_URL)' },
    'log-level': { type: 'string', value: 'LEVEL', description: 'debug, info, warn or error (env LOG_LEVEL; default info)' },
  },
  examples: ['parley serve', 'parley serve --port 8080 --data-dir /var/lib/parley', 'parley serve --database-url postgres://parley@db/parley'],
}

/** Maps the flags onto the environment that src/config.ts reads, then starts the server of src/main.ts. */
export async function runServe({ values }: Parsed, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const port = str(values.port)
  if (port !== undefined && !/^\d{1,5}$/.test(port)) throw new UsageError(`--port must be a number from 0 to 65535, got "${port}"`)
  const mapping: Array<[string, string]> = [
    ['port', 'PORT'], ['host', 'HOST'], ['data-dir', 'PARLEY_DATA_DIR'], ['database-url', 'PARLEY_DATABASE_URL'],
    ['public-url', 'PARLEY_PUBLIC_URL'], ['log-level', 'LOG_LEVEL'],
  ]
  for (const [flag, variable] of mapping) {
    const value = str(values[flag])
    if (value !== undefined) env[variable] = value
  }
  // main.ts starts the server when imported, and owns the process from then on (signals, exit codes).
  await import('../../main.js')
}
