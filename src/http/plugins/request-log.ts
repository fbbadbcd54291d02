import type { FastifyReply, FastifyRequest } from 'fastify'
import type { BotRow } from '../../store/store.js'
import type { App } from '../types.js'

export type RequestLogLevel = 'off' | 'debug' | 'info' | 'warn'

/** Who called, as the request log says it. */
export type CallerKind = 'pat' | 'console-session' | 'bot-key' | 'integration-key' | 'chat-user' | 'anonymous'

/** Probes a load balancer or Prometheus calls every few seconds: logged at debug, not at the log's level. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics'])

/** Query parameters whose value is never logged (tokens, keys, signatures, the Chat API's user key…). */
const SECRET_QUERY = /token|key|secret|passw|signature|^sig$|auth|session|cookie|jwt|credential|code/i
/** Path parameters that are capabilities (a webhook's id lets anyone post to it): logged as [redacted]. */
const SECRET_PARAM = /^(webhookId|token|secret|signature)$/i
const MAX_PATH = 2048
/** pino's level values (a logger at `level` writes lines of that value and above). */
const LEVEL_VALUES: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }

/** The line's path: the URL's path with secret parameters replaced, and its query string without secret values. */
export function loggedPath(url: string, params: unknown): string {
  const q = url.indexOf('?')
  let path = q === -1 ? url : url.slice(0, q)
  if (params && typeof params === 'object') {
    for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
      if (typeof value !== 'string' || value === '' || !SECRET_PARAM.test(name)) continue
      if (!path.includes(value) && !path.includes('%')) continue
      path = path.split('/').map((segment) => (segment === value || (segment.includes('%') && safeDecode(segment) === value) ? '[redacted]' : segment)).join('/')
    }
  }
  if (q !== -1) {
    const query = url.slice(q + 1).split('&').map((pair) => {
      const eq = pair.indexOf('=')
      const name = eq === -1 ? pair : pair.slice(0, eq)
      return eq !== -1 && SECRET_QUERY.test(safeDecode(name)) ? `${name}=[redacted]` : pair
    }).join('&')
    path = `${path}?${query}`
  }
  return path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** What each API's authentication left on the request (src/http/plugins/bot-scope.ts, the Admin, Chat and Integration scopes). */
interface Authenticated {
  principal?: FastifyRequest['principal'] | null
  workspace?: FastifyRequest['workspace'] | null
  chatUser?: FastifyRequest['chatUser'] | null
  integration?: FastifyRequest['integration'] | null
  runtimeBot?: BotRow | null
  filesBot?: BotRow | null
  tablesBot?: BotRow | null
  integrationDefinitionId?: string | null
}

/** The caller kind and the ids the request's authentication established (never a token, key or cookie). */
export function callerOf(request: FastifyRequest): { caller: CallerKind; workspaceId?: string; botId?: string; integrationId?: string; userId?: string; accountId?: string } {
  const r = request as unknown as Authenticated
  const bot = r.runtimeBot ?? r.filesBot ?? r.tablesBot ?? undefined
  const scope = (bot as { integrationScope?: { id: string } } | undefined)?.integrationScope
  const principal = r.principal ?? undefined
  const out: ReturnType<typeof callerOf> = { caller: 'anonymous' }
  if (principal?.kind === 'account') {
    out.caller = principal.session ? 'console-session' : 'pat'
    out.accountId = principal.account.id
  } else if (principal?.kind === 'bot') {
    out.caller = 'bot-key'
    out.botId = principal.botId
  } else if (principal?.kind === 'integration' || r.integrationDefinitionId) {
    out.caller = 'integration-key'
  } else if (r.chatUser) {
    out.caller = 'chat-user'
  }
  const workspaceId = r.workspace?.id ?? bot?.workspaceId
  if (workspaceId) out.workspaceId = workspaceId
  // Admin routes on one bot (/v1/admin/bots/:id…) name it in the path.
  const botId = bot?.id ?? r.integration?.botId ?? (request.routeOptions.url?.startsWith('/v1/admin/bots/:id') ? (request.params as { id?: string }).id : undefined)
  if (botId) out.botId = botId
  const integrationId = scope?.id ?? r.integration?.id
  if (integrationId) out.integrationId = integrationId
  if (r.chatUser) out.userId = r.chatUser.id
  return out
}

/**
 * The request log: one line per request once it is answered (method, route pattern, path, status, duration in ms,
 * caller kind and the ids its authentication established), at `level` (PARLEY_REQUEST_LOG); probes at debug. Never a
 * header, a body, a token or a cookie: the path's secret parameters and the query's secret values are redacted.
 * A synchronous hook, and nothing is built when the logger would drop the line.
 */
export function registerRequestLog(app: App, level: RequestLogLevel): void {
  if (level === 'off') return
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = request.routeOptions.url
    const lineLevel = route !== undefined && PROBES.has(route) ? 'debug' : level
    const log = request.log
    if (LEVEL_VALUES[lineLevel]! >= (LEVEL_VALUES[log.level] ?? Infinity)) {
      log[lineLevel]({
        method: request.method, route: route ?? null, path: loggedPath(request.url, request.params), status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10, ...callerOf(request),
      }, 'request')
    }
    done()
  })
}
