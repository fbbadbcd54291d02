/**
 * Two Parley instances on one PostgreSQL database deliver Runtime API events once each: bot-level and
 * conversation events scheduled through the official @botpress/client on one instance are claimed by
 * whichever instance polls first; every event reaches the bot exactly once. (SQLite has one process.)
 */
import * as chat from '@botpress/chat'
import { Client } from '@botpress/client'
import { afterAll, describe, expect, it } from 'vitest'
import { testStoreKind } from '../helpers/pg.js'
import { EVENT_BOT, eventually, gotEvents } from '../helpers/runtime-bot.js'
import { adminClient, chatUrl, newDataPlace, startOn, type DataPlace, type Restartable } from '../runtime/helpers.js'

describe.skipIf(testStoreKind() !== 'postgres')('e2e: Runtime API events with two instances on PostgreSQL', () => {
  let place: DataPlace
  const servers: Restartable[] = []

  afterAll(async () => {
    for (const s of servers) await s.stop()
    await place?.remove()
  })

  it('each scheduled event reaches the bot once', async () => {
    place = await newDataPlace()
    servers.push(await startOn(place, { runtimeEventPollMs: 50 }))
    servers.push(await startOn(place, { runtimeEventPollMs: 50 }))
    const [a, b] = servers as [Restartable, Restartable]
    const admin = adminClient(a)
    const { bot } = await admin.createBot({ name: 'two-instances' })
    await admin.updateBot({ id: bot.id, code: EVENT_BOT })
    const webhookId = (await admin.getBot({ id: bot.id })).bot.integrations.chat!.webhookId
    const key = await admin.createBotApiKey({ botId: bot.id })
    const clientA = new Client({ apiUrl: a.baseUrl, token: key.value, botId: bot.id })
    const clientB = new Client({ apiUrl: b.baseUrl, token: key.value, botId: bot.id })
    const user = await chat.Client.connect({ apiUrl: chatUrl(b, { webhookId }) })
    const { conversation } = await user.createConversation({})

    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      const client = i % 2 ? clientB : clientA
      const input = i % 4 === 0 ? { conversationId: conversation.id } : {}
      ids.push((await client.createEvent({ type: i % 4 === 0 ? 'custom' : 'tick', payload: { i }, schedule: { delay: 300 }, ...input })).event.id)
    }
    const seen = await eventually('every event to reach the bot', async () => {
      const got = await gotEvents(a, bot.id)
      return ids.every((id) => got.some((e) => e.id === id)) ? got : undefined
    }, 20_000)
    await eventually('all processed', async () => {
      const statuses = await Promise.all(ids.map(async (id) => (await clientA.getEvent({ id })).event.status))
      return statuses.every((s) => s === 'processed') ? true : undefined
    }, 20_000)
    const again = await gotEvents(a, bot.id)
    for (const id of ids) expect(again.filter((e) => e.id === id), id).toHaveLength(1)
    expect(seen.length).toBeGreaterThanOrEqual(ids.length)
  })
})
