import { errors } from '../../lib/errors.js'
import type { Permission } from '../../domain/permissions.js'
import { declaredRefs } from '../../domain/installation-scope.js'
import type { App } from '../types.js'

/** The request property a bot-scoped API keeps its x-bot-id bot in (declared by each API's common.ts). */
export type BotScopeKey = 'filesBot' | 'runtimeBot' | 'tablesBot' | 'cognitiveBot'

/**
 * The authentication of the APIs a bot or its members call for one bot (Files, Runtime, Tables):
 * `Authorization: Bearer <token>` (the bot's API key, or a member's personal access token) and `x-bot-id`.
 * 401 when either is missing or unknown, 403 for another bot's key or a role without the route's
 * `config.permission` (else `defaultPermission`); every route of the scope gets `bodyLimit`.
 */
export function registerBotScope(scope: App, options: { key: BotScopeKey; bodyLimit: number; defaultPermission: Permission }): void {
  const { auth } = scope.services
  const { key, bodyLimit, defaultPermission } = options
  if (!scope.hasRequestDecorator('principal')) scope.decorateRequest('principal', null as never)
  scope.decorateRequest(key, null as never)
  scope.addHook('onRoute', (route) => {
    route.bodyLimit = bodyLimit
    // Every Runtime operation says which resources it names: an integration key may use only its installation's.
    if (key === 'runtimeBot' && !route.config?.installation) throw new Error(`Runtime route ${String(route.method)} ${route.url} has no config.installation declaration`)
  })
  scope.addHook('onRequest', async (request) => {
    request.principal = await auth.authenticate(request.headers.authorization)
    const botId = request.headers['x-bot-id']
    const principal = request.principal
    if (principal.kind === 'integration') {
      // An integration's key: the Runtime API, as the bot seen through its installation (IntegrationService.callerInstallation).
      if (key !== 'runtimeBot') throw errors.forbidden('Integration API keys may only be used with the Runtime API')
      const header = (name: string) => {
        const v = request.headers[name]
        return typeof v === 'string' ? v : undefined
      }
      const { bot, integration } = await scope.services.integrations.callerInstallation(principal.definitionId, header('x-bot-id'), header('x-integration-id'), header('x-integration-alias'))
      request[key] = { ...bot, integrationScope: integration } as typeof bot
      return
    }
    request[key] = await auth.botAccess(request.principal, Array.isArray(botId) ? undefined : botId, request.routeOptions.config.permission ?? defaultPermission)
  })
  if (key === 'runtimeBot') {
    // After validation (the body is parsed): an integration key's request names only its installation's resources (404).
    scope.addHook('preHandler', async (request) => {
      const principal = request.principal
      if (principal.kind !== 'integration') return
      const refs = declaredRefs(request.routeOptions.config.installation!, request)
      await scope.services.installationScope.assert(request.runtimeBot, refs, principal.definitionId)
    })
  }
}
