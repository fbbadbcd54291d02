/**
 * Hosted code with two Parley instances on one PostgreSQL database (issue #26 item 2): a bot deployed with its
 * bundle, users posting through both instances at once. Each instance starts its own process for the bot when it
 * delivers; every message is answered exactly once, in its conversation's order. (SQLite has one process.)
 */
import * as chat from '@botpress/chat'
import { afterAll, describe, expect, it } from 'vitest'
import { bundleFixture } from '../helpers/hosted-bundle.js'
import { testStoreKind } from '../helpers/pg.js'
import { adminClient, chatUrl, newDataPlace, sleep, startOn, type DataPlace, type Restartable } from '../runtime/helpers.js'

const metric = async (s: Restartable, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.baseUrl}/metrics`)).text())?.[1] ?? 0)

describe.skipIf(testStoreKind() !== 'postgres')('e2e: hosted code with two instances on PostgreSQL', () => {
  let place: DataPlace
  const servers: Restartable[] = []

  afterAll(async () => {
    for (const s of servers) await s.stop()
    await place?.remove()
  })

  it('each message is answered once, in order, whichever instance delivers it', async () => {
    place = await newDataPlace()
    servers.push(await startOn(place))
    servers.push(await startOn(place))
    const [a, b] = servers as [Restartable, Restartable]
    const admin = adminClient(a)
    const { bot } = await admin.createBot({ name: 'hosted-two-instances' })
    await admin.updateBot({ id: bot.id, code: await bundleFixture('hosted-bot.mjs', { BUNDLE_VERSION: '"v1"' }) })
    const webhookId = (await admin.getBot({ id: bot.id })).bot.integrations.chat!.webhookId

    const conversations = 4
    const perConversation = 6
    const talks = await Promise.all(Array.from({ length: conversations }, async () => {
      const onA = await chat.Client.connect({ apiUrl: chatUrl(a, { webhookId }) })
      const onB = await chat.Client.connect({ apiUrl: chatUrl(b, { webhookId }), userKey: onA.user.key })
      const { conversation } = await onA.createConversation({})
      return { clients: [onA, onB], conversationId: conversation.id }
    }))
    await Promise.all(talks.map(async ({ clients, conversationId }, c) => {
      for (let m = 0; m < perConversation; m++) {
        await clients[m % 2]!.createMessage({ conversationId, payload: { type: 'text', text: `c${c} m${m}` } })
      }
    }))

    const replies = async (client: chat.AuthenticatedClient, conversationId: string) => {
      const { messages } = await client.listMessages({ conversationId })
      return messages.filter((m) => m.userId !== client.user.id).reverse().map((m) => (m.payload as { text?: string }).text)
    }
    const deadline = Date.now() + 60_000
    for (const [c, { clients, conversationId }] of talks.entries()) {
      const expected = Array.from({ length: perConversation }, (_, m) => `v1: c${c} m${m}`)
      let got = await replies(clients[0]!, conversationId)
      while (got.length < perConversation && Date.now() < deadline) {
        await sleep(200)
        got = await replies(clients[0]!, conversationId)
      }
      await sleep(300) // a second answer to any of them would arrive right behind
      expect(await replies(clients[0]!, conversationId), conversationId).toEqual(expected)
    }
    // Each instance ran the bundle in a process of its own when it delivered (how they split is up to the leases).
    const starts = await Promise.all([a, b].map((s) => metric(s, 'parley_hosted_starts_total')))
    expect(starts[0]! + starts[1]!, `processes started: ${starts.join(' + ')}`).toBeGreaterThanOrEqual(1)
    const delivered = await Promise.all([a, b].map((s) => metric(s, 'parley_remote_deliveries_total')))
    expect(delivered[0]! + delivered[1]!, `delivered by each instance: ${delivered.join(' + ')}`).toBe(conversations * perConversation)
  })
})
