import { integrationWebhookUrl } from '../domain/admin-views.js'
import { urlName } from '../domain/hosted-code.js'
import { errors } from '../lib/errors.js'
import { answeredStatus, outboundFailure, unansweredError } from '../lib/outbound-policy.js'
import { SIGNATURE_HEADER, signatureHeader } from '../lib/signature.js'
import type { Installation, IntegrationService } from '../domain/integration-service.js'
import type { BotRow, Store } from '../store/store.js'
import { breakerLine, integrationEndpoint, type BreakerReport, type RemoteBots } from './remote-bots.js'
import { DeliveryStopped, type RemoteAnswer } from './outbound-http.js'
import { refusedError } from './endpoint-slots.js'
import { failureLine, type DeliveryResult } from './delivery-policy.js'

/**
 * The protocol @botpress/sdk's integration server reads (its `Integration` handler): every request is
 * a POST to the integration's `url` with the headers x-bot-id, x-bot-user-id, x-integration-id (the
 * definition's id), x-integration-alias, x-webhook-id, x-bp-operation, x-bp-type,
 * x-bp-configuration-type, x-bp-configuration (base64 JSON), signed with the definition's
 * signingSecret (x-parley-signature), and a JSON body per operation:
 * - register / unregister: { webhookUrl }
 * - webhook_received: { req: { method, path, query, headers, body } }; its answer { status, headers, body } is relayed
 *   (src/http/routes/integration-webhooks/receive.ts: inert, an allowlist of its headers)
 * - message_created: { conversation, user, type, payload, message } (sent by OutgoingDeliveries, src/runtime/integration-delivery.ts)
 * - action_triggered: { type, input }; answer { output, meta }
 * The integration answers through the Runtime API with an integration API key (AuthService).
 * Transport, timeouts, backoff, the concurrency slots and the circuit breaker are RemoteBots' (one delivery
 * machinery; one endpoint per integration definition and url); message_created, register/unregister and webhook
 * relays follow the delivery rules of src/runtime/delivery-policy.ts (only what was not processed is sent again).
 */

export interface WebhookCall {
  method: string
  /** The path after {webhookUrl} ('' or '/…'). */
  path: string
  /** The query string without '?'. */
  query: string
  headers: Record<string, string>
  body: string | undefined
}

export class IntegrationDelivery {
  constructor(
    private readonly store: Store,
    private readonly remote: RemoteBots,
    private readonly service: IntegrationService,
    private readonly publicUrl: () => string,
  ) {}

  webhookUrl(webhookId: string): string {
    return integrationWebhookUrl(this.publicUrl(), webhookId)
  }

  /** The headers and signed body of one request to the integration. */
  request(bot: BotRow, install: Installation, operation: string, type: string, body: unknown): { headers: Record<string, string>; body: string } {
    const raw = JSON.stringify(body)
    const { integration, link, definition } = install
    return {
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-bot-id': bot.id,
        'x-bot-user-id': bot.id,
        'x-integration-id': definition.id,
        'x-integration-alias': integration.name,
        'x-webhook-id': integration.webhookId,
        'x-bp-operation': operation,
        'x-bp-type': type,
        ...(link.configurationType !== null && { 'x-bp-configuration-type': link.configurationType }),
        'x-bp-configuration': Buffer.from(JSON.stringify(integration.configuration)).toString('base64'),
        [SIGNATURE_HEADER]: signatureHeader(definition.signingSecret, raw, Math.floor(Date.now() / 1000)),
      },
    }
  }

  /**
   * One request to the integration under its slots and circuit breaker. Someone waits for it by default: refused at
   * once (EndpointBusy, EndpointPaused) when its queue is full or it is paused. A `durable` one (outgoing delivery:
   * src/runtime/integration-delivery.ts) waits its turn, then `beforeSend` runs (it renews its lease) right before
   * the POST (given `timeoutMs`); while the integration is paused it is deferred (DeliveryDeferred).
   */
  async once(bot: BotRow, install: Installation, operation: string, type: string, body: unknown, durable?: { beforeSend: () => Promise<void>; timeoutMs: number }): Promise<RemoteAnswer> {
    const url = install.definition.url
    if (url === null) throw errors.invalidPayload(`Integration "${install.definition.name}" has no url: set it with updateIntegration({ url })`)
    const key = integrationEndpoint(install.definition)
    const report = this.breakerReport(bot, install)
    if (!durable) {
      const request = this.request(bot, install, operation, type, body)
      return this.remote.call(key, report, url, request.headers, request.body)
    }
    const release = await this.remote.admit(key)
    try {
      await durable.beforeSend()
      const request = this.request(bot, install, operation, type, body)
      return await this.remote.postTo(key, report, url, request.headers, request.body, durable.timeoutMs)
    } finally {
      release()
    }
  }

  /**
   * A request by the delivery rules (retried while not processed, within `budgetMs`) under the integration's slots;
   * refused at once (EndpointBusy, EndpointPaused) when its queue is full or it is paused.
   */
  private retried(bot: BotRow, install: Installation, operation: string, body: unknown, budgetMs: number): Promise<DeliveryResult> {
    const url = install.definition.url
    if (url === null) throw errors.invalidPayload(`Integration "${install.definition.name}" has no url: set it with updateIntegration({ url })`)
    return this.remote.callRetrying(integrationEndpoint(install.definition), this.breakerReport(bot, install), url, () => this.request(bot, install, operation, operation, body), budgetMs)
  }

  /** The integration's breaker changes, in its logs (getIntegrationLogs). */
  private breakerReport(bot: BotRow, install: Installation): BreakerReport {
    return (change) => {
      const { level, message } = breakerLine(change, `integration ${install.definition.name}`, this.remote.slots.settings)
      void this.service.log(install.definition.id, bot.id, level, message).catch(() => {})
    }
  }

  /**
   * register (enabled) or unregister (disabled, removed) by the delivery rules, its outcome in the integration's logs
   * and, for register, the installation's status (`registration_failed` with the reason). Never throws.
   */
  async lifecycle(bot: BotRow, install: Installation, operation: 'register' | 'unregister'): Promise<void> {
    if (install.definition.url === null) return
    let failure: string | null = null
    let line: string
    const what = `${operation} (bot ${bot.id}, alias ${install.integration.name})`
    try {
      // updateBot waits for register (its answer carries the installation's status): within the caller's wait, as a
      // webhook relay; unregister runs in the background, within the delivery budget.
      const budgetMs = operation === 'register' ? this.remote.settings.timeoutMs : this.remote.settings.budgetMs
      const result = await this.retried(bot, install, operation, { webhookUrl: this.webhookUrl(install.integration.webhookId) }, budgetMs)
      if (result.delivered) line = `${what}: ${answeredStatus(result.answer.status)}`
      else {
        failure = `${operation} ${result.reason}`
        line = failureLine(what, result)
      }
    } catch (err) {
      if (err instanceof DeliveryStopped) return
      failure = `${urlName(install.definition.url)} could not be reached: ${outboundFailure(err)}`
      line = `${what}: ${failure}`
    }
    await this.service.log(install.definition.id, bot.id, failure === null ? 'info' : 'warn', line)
    if (operation === 'register') await this.service.registered(install.integration.id, failure).catch(() => {})
  }

  /**
   * A request on {webhookUrl}: forwarded as webhook_received by the delivery rules within the caller's wait
   * (PARLEY_REMOTE_BOT_TIMEOUT_MS: retried while not processed); the integration's last answer, which the HTTP layer
   * relays as untrusted bytes (an allowlist of its headers). 404 for an unknown or disabled installation.
   */
  async webhook(webhookId: string, call: WebhookCall): Promise<RemoteAnswer> {
    const integration = webhookId.length <= 200 ? await this.store.getIntegrationByWebhookId(webhookId) : undefined
    const install = integration && integration.enabled ? await this.service.installation(integration) : undefined
    const bot = install && (await this.store.getBot(install.integration.botId))
    if (!install || !bot) throw errors.notFound('Webhook', webhookId)
    let answer: RemoteAnswer
    let result: DeliveryResult
    try {
      result = await this.retried(bot, install, 'webhook_received', { req: call }, this.remote.settings.timeoutMs)
    } catch (err) {
      // Refused without sending (queue full, paused): not logged per request (the breaker logs once).
      const refused = refusedError(err, `Integration ${install.definition.name} was not called`)
      if (refused) throw refused
      throw unansweredError('The integration did not answer', err)
    }
    if (result.answer) answer = result.answer
    else {
      const failed = result as Extract<DeliveryResult, { delivered: false }>
      await this.service.log(install.definition.id, bot.id, 'error', `webhook_received (${call.method} ${call.path || '/'}): ${urlName(install.definition.url)} could not be reached: ${failed.reason}`)
      throw unansweredError('The integration did not answer', failed.cause)
    }
    if (answer.status >= 400) await this.service.log(install.definition.id, bot.id, 'warn', `webhook_received (${call.method} ${call.path || '/'}): ${answeredStatus(answer.status)}`)
    return answer
  }

  /** action_triggered of `action` (declared by the definition: IntegrationOperations checks) on an enabled installation. */
  async callAction(bot: BotRow, install: Installation, action: string, input: unknown): Promise<Record<string, unknown>> {
    const type = `${install.integration.name}:${action}`
    let answer: RemoteAnswer
    try {
      answer = await this.once(bot, install, 'action_triggered', action, { type: action, input })
    } catch (err) {
      const refused = refusedError(err, `Action "${type}" was not sent to the integration`)
      if (refused) throw refused
      await this.service.log(install.definition.id, bot.id, 'error', `action_triggered ${action}: ${outboundFailure(err)}`)
      throw unansweredError(`The integration did not answer action "${type}"`, err)
    }
    // A failure is told by its status only: the answer's body is the target's, which may not be an integration at all.
    if (answer.status < 200 || answer.status >= 300) {
      await this.service.log(install.definition.id, bot.id, 'error', `action_triggered ${action}: ${answeredStatus(answer.status)}`)
      throw errors.runtime(`Action "${type}" failed in the integration (it ${answeredStatus(answer.status)})`)
    }
    let body: { output?: unknown } | undefined
    try {
      body = JSON.parse(answer.body) as typeof body
    } catch {
      body = undefined
    }
    const output = body?.output
    if (typeof output !== 'object' || output === null || Array.isArray(output)) throw errors.runtime(`Action "${type}": the integration's answer has no JSON object \`output\``)
    return output as Record<string, unknown>
  }
}
