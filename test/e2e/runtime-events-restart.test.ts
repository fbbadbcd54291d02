/**
 * Scheduled Runtime API events are durable: created through the official @botpress/client, the
 * server stopped before they are due and a new one started on the same data (SQLite file or
 * PostgreSQL database), each event reaches the bot exactly once — a bot-level one through the
 * bot's hooks, one of a conversation through the conversation's log.
 */
import * as chat from '@botpress/chat'
import { Client } from '@botpress/client'
import { afterAll, describe, expect, it } from 'vitest'
import { EVENT_BOT, eventually, gotEvents } from '../helpers/runtime-bot.js'
import { adminClient, chatUrl, newDataPlace, startOn, type DataPlace, type Restartable } from '../runtime/helpers.js'

describe('e2e: scheduled Runtime API events survive a restart', () => {
  let place: DataPlace
  let server: Restartable | undefined

  afterAll(async () => {
    await server?.stop()
    await place?.remove()
  })

  it('events scheduled before a stop are delivered once by the next server', async () => {
    place = await newDataPlace()
    server = await startOn(place, { runtimeEventPollMs: 100 })
    const admin = adminClient(server)
    const { bot } = await admin.createBot({ name: 'durable' })
    await admin.updateBot({ id: bot.id, code: EVENT_BOT })
    const webhookId = (await admin.getBot({ id: bot.id })).bot.integrations.chat!.webhookId
    const key = await admin.createBotApiKey({ botId: bot.id })
    const client = new Client({ apiUrl: server.baseUrl, token: key.value, botId: bot.id })
    const user = await chat.Client.connect({ apiUrl: chatUrl(server, { webhookId }) })
    const { conversation } = await user.createConversation({})

    const botLevel = (await client.createEvent({ type: 'wakeUp', payload: { n: 1 }, schedule: { delay: 1_500 } })).event
    const inConversation = (await client.createEvent({ type: 'custom', payload: { n: 2 }, conversationId: conversation.id, schedule: { delay: 1_500 } })).event
    await server.stop()
    server = undefined

    server = await startOn(place, { runtimeEventPollMs: 100 })
    const restarted = server
    const seen = await eventually('both events to reach the bot', async () => {
      const got = await gotEvents(restarted, bot.id)
      return got.some((e) => e.id === botLevel.id) && got.some((e) => e.id === inConversation.id) ? got : undefined
    })
    expect(seen.find((e) => e.id === botLevel.id)).toMatchObject({ type: 'wakeUp', payload: { n: 1 }, conversationId: null })
    expect(seen.find((e) => e.id === inConversation.id)).toMatchObject({ type: 'custom', payload: { n: 2 }, conversationId: conversation.id })
    const again = new Client({ apiUrl: restarted.baseUrl, token: key.value, botId: bot.id })
    await eventually('both processed', async () => {
      const statuses = await Promise.all([botLevel.id, inConversation.id].map(async (id) => (await again.getEvent({ id })).event.status))
      return statuses.every((s) => s === 'processed') ? true : undefined
    })
    // Once each, even after more polls.
    const got = await gotEvents(restarted, bot.id)
    expect(got.filter((e) => e.id === botLevel.id)).toHaveLength(1)
    expect(got.filter((e) => e.id === inConversation.id)).toHaveLength(1)
  })
})
