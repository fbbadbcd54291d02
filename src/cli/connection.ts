import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { CliError, UsageError } from './errors.js'
import { str, type Value } from './args.js'

/** What `parley serve` writes at first start (src/domain/bootstrap.ts). */
export interface CredentialsFile {
  apiUrl?: string
  workspaceId?: string
  token?: string
  botId?: string
  chat?: { webhookId?: string; url?: string; webchatUrl?: string }
}

export interface Connection {
  apiUrl: string
  token: string
  workspaceId: string | undefined
  /** The demo bot of credentials.json, when it was read. */
  defaultBotId: string | undefined
  credentials: CredentialsFile | undefined
  credentialsPath: string
}

type Flags = Record<string, Value>

export function dataDir(flags: Flags, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(str(flags['data-dir']) || env.PARLEY_DATA_DIR || './data')
}

/** credentials.json of the data directory, or undefined when there is none. Unreadable JSON is an error. */
export function readCredentials(dir: string): { credentials: CredentialsFile | undefined; path: string } {
  const path = join(dir, 'credentials.json')
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return { credentials: undefined, path }
    throw new CliError(`Cannot read ${path}: ${(err as Error).message}`, code === 'EACCES' ? 'It is mode 0600: run parley as the user that started the server, or pass --token.' : undefined)
  }
  try {
    return { credentials: JSON.parse(text) as CredentialsFile, path }
  } catch {
    throw new CliError(`${path} is not valid JSON`, 'Fix or delete it, or pass --api-url and --token.')
  }
}

/**
 * Where to connect and as whom: flags, then environment variables, then credentials.json of the data directory.
 */
export function resolveConnection(flags: Flags, env: NodeJS.ProcessEnv = process.env): Connection {
  const dir = dataDir(flags, env)
  const { credentials, path } = readCredentials(dir)
  const apiUrl = str(flags['api-url']) || env.PARLEY_API_URL || credentials?.apiUrl
  const token = str(flags.token) || env.PARLEY_TOKEN || credentials?.token
  const workspaceId = str(flags.workspace) || env.PARLEY_WORKSPACE_ID || credentials?.workspaceId
  const where = credentials ? `(${path} has no value for it either)` : `(and there is no ${path})`
  if (!apiUrl) {
    throw new UsageError(`No Parley server URL ${where}`, 'Pass --api-url http://127.0.0.1:3000 or set PARLEY_API_URL, or run where `parley serve` keeps its data (--data-dir).')
  }
  if (!token) {
    throw new UsageError(`No access token ${where}`, 'Pass --token pat_… or set PARLEY_TOKEN (the token is printed at the first start and kept in credentials.json).')
  }
  let url: URL
  try {
    url = new URL(apiUrl)
  } catch {
    throw new UsageError(`--api-url "${apiUrl}" is not a URL`, 'Example: --api-url http://127.0.0.1:3000')
  }
  return {
    apiUrl: url.href.replace(/\/+$/, ''),
    token,
    workspaceId,
    defaultBotId: env.PARLEY_BOT_ID || credentials?.botId,
    credentials,
    credentialsPath: path,
  }
}
