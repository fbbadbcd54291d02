/**
 * Installations as Botpress has them (#25 item 5): an unchanged @botpress/sdk integration modelled on Botpress's
 * `integrations/webhook` (test/fixtures/sdk-integrations/webhook.mjs, a real child process) installed under the
 * alias `webhook` takes the place of the bot's built-in webhook; an integration whose register throws leaves its
 * installation `registration_failed` with the reason, where the Botpress CLI reads it (updateBot's and getBot's
 * integrations.<alias>.status / statusReason, through the official @botpress/client).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/webhook.definition.mjs'
import { startParley, type Harness } from '../helpers/harness.js'
import { startSdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { definitionBody } from '../helpers/sdk-integration.js'
import { adminClient, allLogs, createBot, STREAM_CONFIG, waitForLog } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event }) {
    console.log('SEEN ' + JSON.stringify({ type: event.type, payload: event.payload }))
  },
}
`

describe('installations: the webhook alias and registration status', () => {
  let h: Harness
  const programs: SdkBot[] = []

  /** The fixture's definition, an API key for it, and its process (with `env`) at the definition's url. */
  const serveIntegration = async (version: string, env: Record<string, string> = {}) => {
    const admin = adminClient(h)
    const { integration } = await admin.createIntegration({ ...definitionBody(definition), version } as never)
    const key = (await admin.createIntegrationApiKey({ integrationId: integration.id, note: 'fixture' })).value
    const program = await startSdkBot('../sdk-integrations/webhook.mjs', { apiUrl: h.baseUrl, token: key, botId: '', env })
    programs.push(program)
    await admin.updateIntegration({ id: integration.id, url: program.url } as never)
    return integration.id
  }

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: { timeoutMs: 5_000, budgetMs: 20_000, attempts: 1, backoffMs: 50, maxBackoffMs: 100 } } })
  })
  afterAll(async () => {
    await Promise.all(programs.map((p) => p.stop()))
    await h?.close()
  })

  it('an SDK integration installed as `webhook` replaces the built-in webhook: it gets the requests, the built-in url answers 404', async () => {
    const admin = adminClient(h)
    const integrationId = await serveIntegration('1.1.4')
    const bot = await createBot(h, CODE)
    await admin.updateBot({ id: bot.id, integrations: { webhook: { enabled: true } } } as never)
    const builtInUrl = (await admin.getBot({ id: bot.id })).bot.integrations.webhook!.webhookUrl
    expect(builtInUrl).toContain('/webhooks/')

    const { bot: updated } = await admin.updateBot({ id: bot.id, integrations: { webhook: { integrationId, enabled: true, configuration: {} } } } as never)
    const installed = updated.integrations.webhook!
    expect(installed).toMatchObject({ id: integrationId, name: 'webhook', version: '1.1.4', enabled: true, status: 'registered', statusReason: null })
    expect(installed.webhookUrl).toContain('/integration-webhooks/')

    const res = await fetch(`${installed.webhookUrl}/orders?id=7`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"paid":true}' })
    expect(res.status).toBe(200)
    const seen = await waitForLog(h, bot.id, (l) => l.message.startsWith('SEEN ') && l.message.includes('webhook:event'))
    expect(JSON.parse(seen.message.slice(5))).toMatchObject({ type: 'webhook:event', payload: { body: { paid: true }, query: { id: '7' }, method: 'POST', path: '/orders' } })

    // The built-in one is gone for this bot: its url answers 404 and queues nothing.
    const old = await fetch(builtInUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"old":true}' })
    expect(old.status).toBe(404)
    const second = await fetch(installed.webhookUrl, { method: 'GET' })
    expect(second.status).toBe(200)
    await waitForLog(h, bot.id, (l) => l.message.startsWith('SEEN ') && l.message.includes('"method":"GET"'))
    const types = (await allLogs(h, bot.id)).logs.filter((l) => l.message.startsWith('SEEN ')).map((l) => (JSON.parse(l.message.slice(5)) as { type: string }).type)
    expect(types).toEqual(['webhook:event', 'webhook:event'])
    // Disabled and enabled again: still the installation (register runs again).
    await admin.updateBot({ id: bot.id, integrations: { webhook: { enabled: false } } } as never)
    const { bot: again } = await admin.updateBot({ id: bot.id, integrations: { webhook: { enabled: true } } } as never)
    expect(again.integrations.webhook).toMatchObject({ id: integrationId, enabled: true, status: 'registered' })
  })

  it('a register that throws leaves the installation registration_failed with its reason (updateBot\'s answer and getBot)', async () => {
    const admin = adminClient(h)
    const integrationId = await serveIntegration('2.0.0', { REGISTER_ERROR: 'The API token is invalid' })
    const bot = await createBot(h)
    const { bot: updated } = await admin.updateBot({ id: bot.id, integrations: { hooks: { integrationId, enabled: true, configuration: {} } } } as never)
    expect(updated.integrations.hooks).toMatchObject({ status: 'registration_failed', statusReason: 'register answered 400 (Runtime: The API token is invalid)' })
    const { bot: read } = await admin.getBot({ id: bot.id })
    expect(read.integrations.hooks).toMatchObject({ status: 'registration_failed', statusReason: 'register answered 400 (Runtime: The API token is invalid)' })
    // Pointed at a definition whose register succeeds: registered again, no reason.
    const good = await serveIntegration('2.0.1')
    const { bot: fixed } = await admin.updateBot({ id: bot.id, integrations: { hooks: { integrationId: good, enabled: true, configuration: {} } } } as never)
    expect(fixed.integrations.hooks).toMatchObject({ status: 'registered', statusReason: null })
  })
})
