/**
 * An unchanged @botpress/sdk integration with two Parley instances on one PostgreSQL database: the outside
 * service's webhook arrives on one instance, the integration calls the Runtime API of the other, the bot's
 * turn and the outgoing delivery run on either; every outside message gets exactly one reply, delivered to
 * the outside service. (SQLite has one process.)
 */
import { afterAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { testStoreKind } from '../helpers/pg.js'
import { startSdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { definitionBody, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { adminClient, newDataPlace, startOn, type DataPlace, type Restartable } from '../runtime/helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 20_000, attempts: 4, backoffMs: 50, maxBackoffMs: 200 }
const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    await client.createMessage({ payload: { type: 'text', text: 'bot says: ' + event.payload.text } })
  },
}
`

describe.skipIf(testStoreKind() !== 'postgres')('e2e: an SDK integration with two instances on PostgreSQL', () => {
  let place: DataPlace
  let outside: OutsideChat | undefined
  let program: SdkBot | undefined
  const servers: Restartable[] = []

  afterAll(async () => {
    await program?.stop()
    for (const s of servers) await s.stop()
    await outside?.close()
    await place?.remove()
  })

  it('webhooks on one instance, the Runtime API on the other: each outside message gets one reply', async () => {
    place = await newDataPlace()
    servers.push(await startOn(place, { remoteBots: REMOTE }))
    servers.push(await startOn(place, { remoteBots: REMOTE }))
    const [a, b] = servers as [Restartable, Restartable]
    outside = await startOutsideChat()
    const admin = adminClient(a)
    const { integration } = await admin.createIntegration(definitionBody(definition) as never)
    const key = await admin.createIntegrationApiKey({ integrationId: integration.id })
    program = await startSdkBot('../sdk-integrations/outside-chat.mjs', { apiUrl: b.baseUrl, token: key.value, botId: '' })
    await admin.updateIntegration({ id: integration.id, url: program.url } as never)
    const { bot } = await admin.createBot({ name: 'integration-two-instances' })
    await admin.updateBot({ id: bot.id, code: CODE })
    await admin.updateBot({ id: bot.id, integrations: { outside: { integrationId: integration.id, configuration: { serviceUrl: outside.url, verifyToken: 'tok-2' } } } } as never)
    const webhookId = (await adminClient(b).getBot({ id: bot.id })).bot.integrations.outside!.webhookId

    const count = 6
    for (let i = 0; i < count; i++) {
      const on = i % 2 === 0 ? a : b
      const res = await fetch(`${on.baseUrl}/integration-webhooks/${webhookId}`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userId: `u${i % 2}`, chatId: `chat-${i % 3}`, messageId: `m${i}`, text: `t${i}` }),
      })
      expect(res.status).toBe(200)
    }
    await outside.waitFor(() => outside!.sent.length >= count, `${count} replies`, 30_000)
    expect(outside.sent.map((s) => s.text).sort()).toEqual(Array.from({ length: count }, (_, i) => `bot says: t${i}`).sort())
    for (const s of outside.sent) expect(s.chatId).toBe(`chat-${Number(s.text.slice('bot says: t'.length)) % 3}`)
  })
})
