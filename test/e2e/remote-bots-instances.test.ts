/**
 * A remote bot (a `url`) served by two Parley instances on one PostgreSQL database: users post through
 * both instances, and whichever instance takes a conversation's lease delivers its events. Every
 * message reaches the bot exactly once, in its conversation's order. (SQLite has one process.)
 */
import * as chat from '@botpress/chat'
import { afterAll, describe, expect, it } from 'vitest'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { testStoreKind } from '../helpers/pg.js'
import { adminClient, chatUrl, newDataPlace, startOn, type DataPlace, type Restartable } from '../runtime/helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 20_000, attempts: 4, backoffMs: 50, maxBackoffMs: 200 }

describe.skipIf(testStoreKind() !== 'postgres')('e2e: a remote bot with two instances on PostgreSQL', () => {
  let place: DataPlace
  let receiver: BotReceiver | undefined
  const servers: Restartable[] = []

  afterAll(async () => {
    for (const s of servers) await s.stop()
    await receiver?.close()
    await place?.remove()
  })

  it('each message is delivered once, in its conversation\'s order, whichever instance sends it', async () => {
    place = await newDataPlace()
    servers.push(await startOn(place, { remoteBots: REMOTE }))
    servers.push(await startOn(place, { remoteBots: REMOTE }))
    const [a, b] = servers as [Restartable, Restartable]
    receiver = await startBotReceiver()
    const admin = adminClient(a)
    const { bot } = await admin.createBot({ name: 'remote-two-instances' })
    await admin.updateBot({ id: bot.id, url: receiver.url })
    const webhookId = (await admin.getBot({ id: bot.id })).bot.integrations.chat!.webhookId

    const conversations = 6
    const perConversation = 8
    // one user per conversation, with a client on each instance (the same user key)
    const talks = await Promise.all(Array.from({ length: conversations }, async () => {
      const onA = await chat.Client.connect({ apiUrl: chatUrl(a, { webhookId }) })
      const onB = await chat.Client.connect({ apiUrl: chatUrl(b, { webhookId }), userKey: onA.user.key })
      const { conversation } = await onA.createConversation({})
      return { clients: [onA, onB], conversationId: conversation.id }
    }))
    const sent = new Map<string, string[]>()
    // every conversation posts alternately through one instance and the other, all conversations at once
    await Promise.all(talks.map(async ({ clients, conversationId }, c) => {
      const ids: string[] = []
      for (let m = 0; m < perConversation; m++) {
        const { message } = await clients[m % 2]!.createMessage({ conversationId, payload: { type: 'text', text: `c${c} m${m}` } })
        ids.push(message.id)
      }
      sent.set(conversationId, ids)
    }))

    const total = conversations * perConversation
    await receiver.until((r) => r.filter((q) => q.headers['x-bp-operation'] === 'event_received').length >= total, `${total} deliveries`, 30_000)
    await new Promise((r) => setTimeout(r, 500)) // a second delivery of any of them would arrive right behind
    const delivered = receiver.events().map((q) => q.body.event as { id: string; conversationId: string })
    expect(delivered).toHaveLength(total)
    for (const [conversationId, ids] of sent) {
      expect(delivered.filter((e) => e.conversationId === conversationId).map((e) => e.id), conversationId).toEqual(ids)
    }
    // the instances' own counts add up to the same (how they split the conversations is up to the leases)
    const counted = await Promise.all([a, b].map(async (s) => Number(/^parley_remote_deliveries_total (\d+)$/m.exec(await (await fetch(`${s.baseUrl}/metrics`)).text())?.[1])))
    expect(counted[0]! + counted[1]!, `delivered by each instance: ${counted.join(' + ')}`).toBe(total)
  })
})
