import type { IntegrationDefinitionRow } from '../store/integration-store.js'

/**
 * Parley's built-in integrations as the hub shows them (getPublicIntegration, getPublicIntegrationById), so a bot
 * definition that adds Botpress's `chat` (0.7.6 at the corpus commit) or `webhook` (1.1.4) resolves by name and
 * version and `bp deploy` can install it: updateBot({ integrations: { chat: { integrationId } } }) then enables
 * the built-in one. Their ids are fixed; a bot's built-in integration shows its own row id, which the hub also
 * resolves (see IntegrationService.hubGetById).
 */
const EPOCH = Date.UTC(2024, 0, 1)

function builtIn(name: string, version: string, title: string, description: string, channels: Record<string, unknown>): IntegrationDefinitionRow {
  return {
    id: `parley-builtin-${name}`, workspaceId: '', name, version, url: null, dev: false, signingSecret: '', visibility: 'public',
    definition: { title, description, channels: channels as never, identifier: {}, configurations: {} }, createdAt: EPOCH, updatedAt: EPOCH,
  }
}

const anyObject = { schema: { type: 'object', additionalProperties: true } }

export const BUILTIN_DEFINITIONS: Record<string, IntegrationDefinitionRow> = {
  chat: builtIn('chat', '0.7.6', 'Chat', 'Built-in Chat API for end-user clients (@botpress/chat)', {
    channel: {
      title: 'Channel', messages: Object.fromEntries(['text', 'image', 'audio', 'video', 'file', 'location', 'carousel', 'card', 'dropdown', 'choice', 'bloc', 'markdown'].map((t) => [t, anyObject])),
      conversation: { tags: {} }, message: { tags: {} },
    },
  }),
  webhook: builtIn('webhook', '1.1.4', 'Webhook', 'Built-in webhook: POST any JSON to webhookUrl, the bot gets a `webhook` event', {}),
}

/** The built-in definition of this id, or of this name. */
export const builtInById = (id: string) => Object.values(BUILTIN_DEFINITIONS).find((d) => d.id === id)
export const builtInByName = (name: string) => (Object.hasOwn(BUILTIN_DEFINITIONS, name) ? BUILTIN_DEFINITIONS[name] : undefined)
