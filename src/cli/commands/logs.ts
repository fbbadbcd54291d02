import { AdminApi, type LogEntry } from '../admin-api.js'
import { CONNECTION_OPTIONS, intOption, type CommandSpec, type Parsed, str } from '../args.js'
import { resolveConnection } from '../connection.js'
import { UsageError } from '../errors.js'
import { out, style } from '../output.js'

export const logs: CommandSpec = {
  name: 'logs',
  summary: 'Show a bot\'s logs (console.* of its code and the runtime\'s errors); --follow keeps watching',
  usage: ['parley logs [<bot-id>] [--follow] [--since 10m|ISO-DATE] [--json]'],
  description: 'Without a bot id, the demo bot of credentials.json (or PARLEY_BOT_ID). Oldest first.',
  options: {
    follow: { type: 'boolean', short: 'f', description: 'Keep polling for new entries until interrupted (Ctrl-C)' },
    since: { type: 'string', value: 'WHEN', description: 'Only entries from this time: a duration back from now (30s, 10m, 2h, 1d) or an ISO date' },
    interval: { type: 'string', value: 'MS', description: 'Polling interval with --follow (default 2000)' },
    json: { type: 'boolean', description: 'One JSON object per line' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 0, max: 1, names: 'the bot id' },
  examples: ['parley logs', 'parley logs 0193… --follow', 'parley logs "$BOT" --since 1h --json | jq .message'],
}

export function parseSince(value: string, now = Date.now()): number {
  const relative = /^(\d+)\s*(ms|s|m|h|d)$/.exec(value.trim())
  if (relative) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'ms' | 's' | 'm' | 'h' | 'd']
    return now - Number(relative[1]) * unit
  }
  const at = Date.parse(value)
  if (Number.isNaN(at)) throw new UsageError(`--since "${value}" is neither a duration (10m, 2h) nor a date`, 'Examples: --since 15m, --since 2026-01-31T12:00:00Z')
  return at
}

const key = (l: LogEntry) => `${l.timestamp}\u0000${l.level}\u0000${l.conversationId ?? ''}\u0000${l.message}`

export async function runLogs({ values, positionals }: Parsed, signal?: AbortSignal): Promise<void> {
  const interval = intOption(values.interval, 'interval', 2000, 100)
  const since = str(values.since)
  let from: number | undefined = since ? parseSince(since) : undefined
  const connection = resolveConnection(values)
  const botId = positionals[0] ?? connection.defaultBotId
  if (!botId) throw new UsageError('Which bot? No bot id given and no botId in credentials.json', 'Usage: parley logs <bot-id> (see `parley bots list`)')
  const api = new AdminApi(connection)
  await api.getBot(botId) // a clear 404 before anything else

  const colorLevel = (level: string) => {
    const s = process.stdout
    return level === 'error' ? style.red(s)(level.padEnd(5)) : level === 'warn' ? style.yellow(s)(level.padEnd(5)) : style.dim(s)(level.padEnd(5))
  }
  const print = (l: LogEntry) => {
    if (values.json) return out(JSON.stringify(l))
    out(`${style.dim(process.stdout)(l.timestamp)} ${colorLevel(l.level)} ${l.conversationId ? style.cyan(process.stdout)(`[${l.conversationId}] `) : ''}${l.message}`)
  }

  // Entries of the last millisecond already printed: a later poll starts at that millisecond again (the API's
  // cursor is opaque and ends with the last page), so they are skipped once each.
  let boundary = new Map<string, number>()
  let boundaryTime: string | undefined
  const fetchNew = async () => {
    let nextToken: string | undefined
    const seenAtBoundary = new Map(boundary)
    do {
      const page = await api.getBotLogs(botId, { ...(from !== undefined && { timeStart: new Date(from).toISOString() }), ...(nextToken && { nextToken }) })
      for (const entry of page.logs) {
        if (entry.timestamp === boundaryTime) {
          const k = key(entry)
          const left = seenAtBoundary.get(k) ?? 0
          if (left > 0) {
            seenAtBoundary.set(k, left - 1)
            continue
          }
        }
        print(entry)
        if (entry.timestamp !== boundaryTime) {
          boundaryTime = entry.timestamp
          boundary = new Map()
        }
        boundary.set(key(entry), (boundary.get(key(entry)) ?? 0) + 1)
        from = Date.parse(entry.timestamp)
      }
      nextToken = page.nextToken
    } while (nextToken)
  }

  await fetchNew()
  if (!values.follow) return
  while (!signal?.aborted) {
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', wake)
        resolve()
      }, interval)
      signal?.addEventListener('abort', wake, { once: true })
    })
    if (signal?.aborted) break
    await fetchNew()
  }
}
