/**
 * Hosted code for integrations (issue #26 item 2): an @botpress/sdk integration bundled as `bp build` bundles it,
 * deployed with createIntegration({ code }) (no url, as `bp deploy` sends it), runs in a process Parley starts with
 * its secrets (SECRET_<NAME>) and its own API key; an outside service posts to the webhook, a bot answers, the
 * reply goes out through the integration's channel; what the process prints is in getIntegrationLogs. A `code`
 * that is not a bundle is refused. Item 3: a hosted bot's plugin (bundled into the bot, as the CLI does) runs, and
 * calls an interface action that resolves to the integration implementing the interface.
 */
import { isApiError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { startParley, type Harness } from '../helpers/harness.js'
import { bundleFixture } from '../helpers/hosted-bundle.js'
import { definitionBody } from '../helpers/sdk-integration.js'
import { adminClient, createBot, sleep, Talk, waitForLog } from './helpers.js'

const BOT = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ payload: { type: 'text', text: 'bot says: ' + event.payload.text } })
  },
}
`

const schema = (properties: Record<string, unknown> = {}) => ({ type: 'object', properties, additionalProperties: false })

async function integrationLines(h: Harness, id: string): Promise<string[]> {
  const { logs } = await adminClient(h).getIntegrationLogs({ id, timeStart: new Date(0).toISOString() })
  return logs.map((l) => `${l.level} ${l.message}`)
}

/** The integration's log lines once one is `line` (a process's lines are written in batches, a moment after they are printed). */
async function untilIntegrationLine(h: Harness, id: string, line: string): Promise<string[]> {
  const deadline = Date.now() + 20_000
  let lines = await integrationLines(h, id)
  while (!lines.includes(line) && Date.now() < deadline) {
    await sleep(100)
    lines = await integrationLines(h, id)
  }
  expect(lines).toContain(line)
  return lines
}

describe('hosted code: an integration deployed with its bundle', () => {
  let h: Harness
  let code: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    code = await bundleFixture('hosted-integration.mjs')
  }, 60_000)

  afterAll(async () => {
    await h?.close()
  })

  it('runs with its secrets and its own key; takes a webhook, and sends the bot\'s reply through its channel', async () => {
    const admin = adminClient(h)
    const { integration } = await admin.createIntegration({ ...definitionBody(definition), name: `hosted-${Date.now().toString(36)}`, secrets: { API_KEY: 'sekret' }, code } as never)
    expect(integration.url).toBe('')
    const bot = await createBot(h, BOT)
    const { bot: updated } = await admin.updateBot({ id: bot.id, integrations: { outside: { integrationId: integration.id, enabled: true, configuration: { serviceUrl: 'http://127.0.0.1:9/', verifyToken: 'token' } } } } as never)
    expect(updated.integrations.outside).toMatchObject({ status: 'registered' })
    const webhookUrl = updated.integrations.outside!.webhookUrl

    const echo = await fetch(`${webhookUrl}/echo`)
    expect(echo.status).toBe(200)
    const seen = (await echo.json()) as { integrationId: string; alias: string; secret: string; env: string[] }
    expect(seen).toEqual({
      integrationId: integration.id, alias: 'outside', secret: 'sekret',
      env: ['BP_API_URL', 'BP_INTEGRATION_ID', 'BP_TOKEN', 'NODE_ENV', 'SECRET_API_KEY'],
    })

    const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u1', chatId: 'c1', messageId: 'm1', text: 'hello' }) })
    expect(res.status).toBe(200)
    const lines = await untilIntegrationLine(h, integration.id, 'info sent to the outside: bot says: hello')
    expect(lines).toContain(`info registered as outside for ${bot.id}`)
    expect(lines.filter((l) => l.startsWith('info Hosted code started'))).toHaveLength(1)
  })

  it('a hosted bot\'s plugin runs, and its interface action resolves to the integration implementing the interface', async () => {
    const admin = adminClient(h)
    // The interface, then an integration implementing it (its action merged into the integration's, as the SDK's
    // IntegrationDefinition.extend does, and the implementation named under `interfaces`), as `bp deploy` sends them.
    const typing = { input: { schema: schema({ conversationId: { type: 'string' }, messageId: { type: 'string' } }) }, output: { schema: schema() } }
    const { interface: iface } = await admin.createInterface({ name: `typing-indicator-${Date.now().toString(36)}`, version: '0.0.1', entities: {}, events: {}, actions: { startTypingIndicator: typing } } as never)
    const body = definitionBody(definition)
    const { integration } = await admin.createIntegration({
      ...body, name: `typing-${Date.now().toString(36)}`, code,
      actions: { ...(body.actions as object), startTypingIndicator: typing },
      interfaces: { 'typing-indicator': { id: iface.id, entities: {}, actions: { startTypingIndicator: { name: 'startTypingIndicator' } }, events: {}, channels: {} } },
    } as never)
    const bot = await createBot(h, await bundleFixture('plugin-bot.mjs'))
    await admin.updateBot({ id: bot.id, integrations: { outside: { integrationId: integration.id, enabled: true, configuration: { serviceUrl: 'http://127.0.0.1:9/', verifyToken: 'token' } } } } as never)

    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('hello')).toEqual(['after the plugin: hello'])
      await waitForLog(h, bot.id, (l) => l.message === 'typing-indicator answered {}')
      await untilIntegrationLine(h, integration.id, `info typing in ${talk.conversationId}`)
      await waitForLog(h, bot.id, (l) => l.message === 'plugin helper saw: hello')
    } finally {
      await talk.close()
    }
  })

  it('refuses a code that is not a bundle (400), in createIntegration and updateIntegration, changing nothing', async () => {
    const admin = adminClient(h)
    const name = `refused-${Date.now().toString(36)}`
    const refused = await admin.createIntegration({ ...definitionBody(definition), name, code: 'export default 1' } as never).catch((err: unknown) => err)
    expect(isApiError(refused) && refused.code === 400 && refused.type === 'InvalidPayload').toBe(true)
    expect((refused as Error).message).toMatch(/code must be the CommonJS bundle `bp build` makes/)
    const { integration } = await admin.createIntegration({ ...definitionBody(definition), name } as never)
    const again = await admin.updateIntegration({ id: integration.id, code: 42 } as never).catch((err: unknown) => err)
    expect(isApiError(again) && again.code === 400).toBe(true)
    expect(await h.store.packages.getBundle('integration', integration.id)).toBeUndefined()
  })
})
