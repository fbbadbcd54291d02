import { Type } from 'typebox'
import type { App } from '../../types.js'
import { WebchatConfigSchema } from '../../schemas/admin.js'
import { chatParams, chatSchema } from './common.js'

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
 * GET /{webhookId}/webchat (Parley's addition to the Chat API): what embed.js's launcher needs (name, colours,
 * icon, label, side) on a page of another origin. Open to anyone who knows the webhook id, like the webchat page
 * that carries the same values; unknown or disabled integrations answer 404 (the scope's hook).
 */
export default function getWebchatSettings(app: App): void {
  app.get('/webchat', {
    config: { cors: PUBLIC_CORS },
    schema: chatSchema('getWebchatSettings', "The bot's public webchat settings; any origin may read them (no credentials)", { params: chatParams() }, { 200: PublicWebchatSettings }, { authenticated: false }),
  }, async (request, reply) => {
    const webchat = await app.services.chat.publicWebchatConfig(request.integration)
    reply
      .header('cache-control', 'public, max-age=60')
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'cross-origin')
    return { webchat }
  })
  app.options('/webchat', { config: { cors: PUBLIC_CORS }, schema: { hide: true } }, async (_request, reply) => reply.code(204).send())
}
