import { parseArgs } from 'node:util'
import { UsageError } from './errors.js'

export interface OptionSpec {
  type: 'string' | 'boolean'
  short?: string
  /** May be repeated; the value is then an array. */
  multiple?: boolean
  description: string
  /** Placeholder shown in help, e.g. URL. */
  value?: string
}

export interface CommandSpec {
  /** Full name, e.g. `bots create`. */
  name: string
  summary: string
  usage: string[]
  description?: string
  options: Record<string, OptionSpec>
  examples?: string[]
  /** Accepted number of positional arguments. */
  positionals?: { min: number; max: number; names: string }
}

/** Flags every command that talks to the Admin API accepts. */
export const CONNECTION_OPTIONS: Record<string, OptionSpec> = {
  'api-url': { type: 'string', value: 'URL', description: 'Parley server URL (env PARLEY_API_URL; default: apiUrl of credentials.json)' },
  token: { type: 'string', value: 'TOKEN', description: 'Personal access token (env PARLEY_TOKEN; default: token of credentials.json)' },
  workspace: { type: 'string', value: 'ID', description: 'Workspace id (env PARLEY_WORKSPACE_ID; default: workspaceId of credentials.json)' },
  'data-dir': { type: 'string', value: 'DIR', description: 'Where credentials.json is (env PARLEY_DATA_DIR; default: ./data)' },
}

export const HELP_OPTION: Record<string, OptionSpec> = {
  help: { type: 'boolean', short: 'h', description: 'Show this help' },
}

export type Value = string | boolean | Array<string | boolean> | undefined

export interface Parsed {
  values: Record<string, Value>
  positionals: string[]
  help: boolean
}

export function parseCommand(spec: CommandSpec, argv: string[]): Parsed {
  const options = { ...spec.options, ...HELP_OPTION }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(options).map(([name, o]) => [name, { type: o.type, ...(o.short && { short: o.short }), ...(o.multiple && { multiple: true }) }])),
      allowPositionals: true,
      strict: true,
    })
  } catch (err) {
    const message = err instanceof Error ? err.message.replace(/\. To specify a positional argument.*$/s, '') : String(err)
    throw new UsageError(message, `Run \`parley ${spec.name} --help\` for the options.`)
  }
  const values = parsed.values as Record<string, Value>
  const help = values.help === true
  if (!help && spec.positionals) {
    const n = parsed.positionals.length
    if (n < spec.positionals.min) throw new UsageError(`Missing ${spec.positionals.names}`, `Usage: ${spec.usage[0]}`)
    if (n > spec.positionals.max) throw new UsageError(`Unexpected argument "${parsed.positionals[spec.positionals.max]}"`, `Usage: ${spec.usage[0]}`)
  } else if (!help && parsed.positionals.length > 0) {
    throw new UsageError(`Unexpected argument "${parsed.positionals[0]}"`, `Usage: ${spec.usage[0]}`)
  }
  return { values, positionals: parsed.positionals, help }
}

export function helpText(spec: CommandSpec): string {
  const options = { ...spec.options, ...HELP_OPTION }
  const flags = Object.entries(options).map(([name, o]) => [`${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}`, o.description] as const)
  const width = Math.max(...flags.map(([f]) => f.length))
  return [
    `parley ${spec.name} — ${spec.summary}`,
    '',
    'Usage:',
    ...spec.usage.map((u) => `  ${u}`),
    ...(spec.description ? ['', spec.description] : []),
    '',
    'Options:',
    ...flags.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`),
    ...(spec.examples?.length ? ['', 'Examples:', ...spec.examples.map((e) => `  ${e}`)] : []),
    '',
  ].join('\n')
}

export const str = (v: Value): string | undefined => (typeof v === 'string' ? v : undefined)

export const strings = (v: Value): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [])

/** A positive integer flag, or a usage error naming the flag. */
export function intOption(v: Value, name: string, fallback: number, min = 0): number {
  if (typeof v !== 'string') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got "${v}"`)
  return n
}
