import { Type } from 'typebox'
import type { App } from '../../types.js'
import { WebchatConfigSchema } from '../../schemas/admin.js'
import { routeSchema } from '../route-schema.js'
import { WEBCHAT_PREFIX } from '../../../webchat/urls.js'

/**
 * The public settings of one chat integration's webchat: its response schema names each key, so the serializer
 * drops anything else (upload policy, or any field a later change would add to the bot's settings).
 */
export const PublicWebchatSettings = Type.Object({
  webchat: Type.Object(WebchatConfigSchema.properties, { additionalProperties: false, description: "The bot's public webchat settings (docs/webchat.md)" }),
}, { additionalProperties: false })

/**
 * CORS of this route only: any origin may read it, without credentials, with GET (and its preflight). The rest of
 * Parley keeps the policy registered in app.ts; the preflight (OPTIONS) route below carries the same config, so the
 * CORS plugin answers it with these options instead of the wildcard route's.
 */
const PUBLIC_CORS = { origin: '*', credentials: false, methods: ['GET'], allowedHeaders: [], maxAge: 86_400 }

/**
 * GET /webchat/{webhookId}/settings: what embed.js's launcher needs (name, colours, icon, label, side) on a page
 * of another origin. Open to anyone who knows the webhook id, like the webchat page that carries the same values.
 * Unknown or disabled integrations answer 404.
 */
export default function getWebchatSettings(app: App): void {
  const path = `${WEBCHAT_PREFIX}/:webhookId/settings`
  const params = Type.Object({ webhookId: Type.String({ description: "The chat integration's webhook id" }) })
  app.get(path, {
    config: { cors: PUBLIC_CORS },
    schema: routeSchema('webchat', [], 'getWebchatSettings', "A chat integration's public webchat settings (any origin may read them)", { params }, { 200: PublicWebchatSettings }),
  }, async (request, reply) => {
    const webchat = await app.services.chat.publicWebchatConfig(request.params.webhookId)
    reply
      .header('cache-control', 'public, max-age=60')
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'cross-origin')
    return { webchat }
  })
  app.options(path, { config: { cors: PUBLIC_CORS }, schema: { hide: true } }, async (_request, reply) => reply.code(204).send())
}
