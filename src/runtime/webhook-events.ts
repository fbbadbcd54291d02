import type { BotRow, IntegrationRow } from '../store/store.js'
import type { TurnInput } from './prelude-contract.js'
import type { SandboxHost } from './sandbox.js'
import type { HostExtension, WebhookEventSource } from '../domain/webhook-service.js'

export type { HostExtension, WebhookEventSource }

/**
 * The spec's event object for a webhook delivery: type and integration `webhook`, no conversation
 * or user (a webhook comes from a system, not from someone in a conversation).
 */
export function webhookEvent(bot: BotRow, integration: IntegrationRow, source: WebhookEventSource, state: TurnInput['event']['state']): TurnInput['event'] {
  const size = Number(source.payload.size ?? 0)
  return {
    botId: bot.id,
    createdOn: new Date(source.createdAt).toISOString(),
    direction: 'incoming',
    id: source.id,
    integration: integration.name,
    payload: source.payload,
    preview: `webhook ${source.payload.contentType ?? ''} (${size} bytes)`,
    state,
    tags: { conversation: {}, message: {}, user: {} },
    type: 'webhook',
  }
}

/** `host` plus the extension's methods; everything else goes to the original host. */
export function withExtension<H extends SandboxHost>(host: H, extension: HostExtension | undefined): H {
  if (!extension) return host
  return {
    ...host,
    call: async (method: string, args: unknown) => {
      const own = Object.hasOwn(extension, method) ? extension[method] : undefined
      if (!own) return host.call(method, args)
      return own((typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>)
    },
  }
}
