import type { App } from '../types.js'

type Route = (app: App) => void

/**
 * The end-user APIs' auth by scope (the Chat API under /{webhookId}, Botpress's webchat API under
 * /webchat-api/{clientId}): every route resolves the chat integration from the path parameter `param`
 * (unknown or disabled → 404); `open` routes need nothing more, `authenticated` ones a valid x-user-key
 * (→ 401), whose user is `request.chatUser`.
 */
export async function registerChatUserScope(app: App, param: string, routes: { open: Route[]; authenticated: Route[] }): Promise<void> {
  app.decorateRequest('integration', null as never)
  app.decorateRequest('chatUser', null as never)

  app.addHook('onRequest', async (request) => {
    const id = (request.params as Record<string, string>)[param]!
    request.integration = await app.services.chat.resolveIntegration(id)
  })

  for (const route of routes.open) route(app)

  await app.register(async function authenticated(scope: App) {
    scope.addHook('onRequest', async (request) => {
      const key = request.headers['x-user-key']
      request.chatUser = await app.services.chat.authenticate(request.integration, Array.isArray(key) ? undefined : key)
    })
    for (const route of routes.authenticated) route(scope)
  })
}
