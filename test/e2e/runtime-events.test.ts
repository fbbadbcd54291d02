/**
 * Runtime API events driven by the official @botpress/client@1.45.0 over real HTTP, reaching a
 * sandboxed bot: an event of a conversation goes through the conversation's log like a Chat API
 * custom event (the bot answers on the stream); a bot-level event and a state's state_expired event
 * run the bot's hooks as bot-level turns; a scheduled event fires once and a canceled one never;
 * getEvent/listEvents report statuses (also for the Chat API's own custom events); another bot's
 * events are 404. Timing: waits poll for the outcome.
 */
import { InvalidPayloadError, ResourceNotFoundError, type Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { EVENT_BOT, eventually, gotEvents, runtimeBot, type RuntimeBot } from '../helpers/runtime-bot.js'
import { STREAM_CONFIG, Talk } from '../runtime/helpers.js'

describe('e2e: Runtime API events (official client)', () => {
  let h: Harness
  let bot: RuntimeBot
  let client: Client
  const got = () => gotEvents(h, bot.id)
  const gotOne = (id: string) => eventually(`the bot to see event ${id}`, async () => (await got()).find((e) => e.id === id))

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, runtimeEventPollMs: 100 } })
    bot = await runtimeBot(h, { code: EVENT_BOT, states: { reminder: { type: 'conversation', schema: { type: 'object' }, expiry: 1_000 } } })
    client = bot.client
  })
  afterAll(async () => h?.close())

  it('an event of a conversation reaches the bot through the conversation (it answers on the stream); status pending → processed', async () => {
    const talk = await Talk.open({ url: bot.chat.url, encryptionKey: bot.chat.encryptionKey })
    try {
      const { event } = await client.createEvent({ type: 'custom', payload: { reply: 'ping' }, conversationId: talk.conversationId })
      expect(event).toMatchObject({ type: 'custom', payload: { reply: 'ping' }, conversationId: talk.conversationId, failureReason: null })
      expect(['pending', 'processed']).toContain(event.status)
      await talk.until(() => talk.botTexts().includes('got ping'), 'the bot\'s answer on the stream')
      // The stream saw the event itself too, as it sees a Chat API custom event.
      expect(talk.events.some((e) => e.id === event.id)).toBe(true)
      const seen = await gotOne(event.id)
      expect(seen).toMatchObject({ type: 'custom', conversationId: talk.conversationId })
      await eventually('processed', async () => ((await client.getEvent({ id: event.id })).event.status === 'processed' ? true : undefined))
      // The status filter agrees with what getEvent says.
      expect((await client.listEvents({ conversationId: talk.conversationId, status: 'processed' })).events.map((e) => e.id)).toContain(event.id)
      expect((await client.listEvents({ conversationId: talk.conversationId, status: 'pending' })).events.map((e) => e.id)).not.toContain(event.id)
    } finally {
      await talk.close()
    }
  })

  it('a bot-level event runs the bot\'s hooks with its type and payload; processed', async () => {
    const { event } = await client.createEvent({ type: 'inventoryChanged', payload: { sku: 'a1', left: 2 } })
    expect(event).toMatchObject({ type: 'inventoryChanged', status: 'pending', failureReason: null })
    expect(event.conversationId).toBeUndefined()
    const seen = await gotOne(event.id)
    expect(seen).toEqual({ id: event.id, type: 'inventoryChanged', payload: { sku: 'a1', left: 2 }, conversationId: null, userId: null })
    await eventually('processed', async () => ((await client.getEvent({ id: event.id })).event.status === 'processed' ? true : undefined))
  })

  it('a state that expires raises state_expired, seen by the bot\'s hook with the state', async () => {
    const { conversationId } = await bot.converse()
    const { state } = await client.setState({ type: 'conversation', id: conversationId, name: 'reminder', payload: { note: 'call back' } })
    const expired = await eventually('the state_expired event', async () => (await got()).find((e) => e.type === 'state_expired' && e.payload.state?.id === state.id))
    expect(expired.payload.state).toMatchObject({ id: state.id, name: 'reminder', type: 'conversation', conversationId, payload: { note: 'call back' } })
    await expect(client.getState({ type: 'conversation', id: conversationId, name: 'reminder' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const listed = await client.listEvents({ type: 'state_expired', conversationId })
    expect(listed.events.map((e) => e.id)).toEqual([expired.id])
    expect(listed.events[0]!.status).toBe('processed')
  })

  it('a scheduled event fires once when due; a canceled one never', async () => {
    const fire = await client.createEvent({ type: 'reminderDue', payload: { n: 1 }, schedule: { delay: 600 } })
    const cancel = await client.createEvent({ type: 'reminderDue', payload: { n: 2 }, schedule: { dateTime: new Date(Date.now() + 600).toISOString() } })
    expect(fire.event.status).toBe('scheduled')
    expect(cancel.event.status).toBe('scheduled')
    await client.cancelScheduledEvent({ id: cancel.event.id })
    expect((await client.getEvent({ id: cancel.event.id })).event.status).toBe('canceled')
    await gotOne(fire.event.id)
    // Both were due at the same time: the poll that delivered one has passed the other.
    await eventually('processed', async () => ((await client.getEvent({ id: fire.event.id })).event.status === 'processed' ? true : undefined))
    const seen = (await got()).filter((e) => e.type === 'reminderDue')
    expect(seen.map((e) => e.id)).toEqual([fire.event.id])
    expect((await client.getEvent({ id: cancel.event.id })).event.status).toBe('canceled')
    // Canceling again, or canceling a delivered event, is refused.
    await expect(client.cancelScheduledEvent({ id: cancel.event.id })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(client.cancelScheduledEvent({ id: fire.event.id })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(client.cancelScheduledEvent({ id: 'nope' })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('listEvents filters (type, status, conversation) and pages; getEvent answers for Chat API custom events', async () => {
    const type = `kind-${Date.now()}`
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await client.createEvent({ type, payload: { i }, schedule: { delay: 3_600_000 } })).event.id)
    const all = await client.list.events({ type }).collect()
    expect(all.map((e) => e.id)).toEqual([...ids].reverse())
    const page = await client.listEvents({ type, pageSize: 2 })
    expect(page.events).toHaveLength(2)
    expect(page.meta.nextToken).toBeDefined()
    expect((await client.listEvents({ type, status: 'scheduled' })).events).toHaveLength(5)
    expect((await client.listEvents({ type, status: 'processed' })).events).toHaveLength(0)
    for (const id of ids) await client.cancelScheduledEvent({ id })

    const { user, conversationId } = await bot.converse()
    const { event: chatEvent } = await user.createEvent({ conversationId, payload: { from: 'the end user' } })
    const viaRuntime = await client.getEvent({ id: chatEvent.id })
    expect(viaRuntime.event).toMatchObject({ id: chatEvent.id, type: 'custom', payload: { from: 'the end user' }, conversationId, userId: user.user.id })
    await eventually('processed', async () => ((await client.getEvent({ id: chatEvent.id })).event.status === 'processed' ? true : undefined))
    // listEvents has it too, merged with the Runtime API's events of the conversation, newest first.
    const { event: runtimeEvent } = await client.createEvent({ type: 'custom', payload: { from: 'the bot' }, conversationId })
    const listed = await client.list.events({ conversationId }).collect()
    expect(listed.map((e) => e.id)).toEqual([runtimeEvent.id, chatEvent.id])
    expect(listed[1]).toMatchObject({ type: 'custom', payload: { from: 'the end user' }, status: 'processed', userId: user.user.id })
    const paged = await client.listEvents({ conversationId, pageSize: 1 })
    expect(paged.events.map((e) => e.id)).toEqual([runtimeEvent.id])
    expect((await client.listEvents({ conversationId, pageSize: 1, nextToken: paged.meta.nextToken })).events.map((e) => e.id)).toEqual([chatEvent.id])
    expect((await client.listEvents({ conversationId, type: 'other' })).events).toEqual([])
    expect((await client.listEvents({ conversationId, status: 'processed' })).events.map((e) => e.id)).toContain(chatEvent.id)
  })

  it('refuses bad schedules and references; another bot\'s events and conversations are 404', async () => {
    await expect(client.createEvent({ type: 't', payload: {}, schedule: {} })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(client.createEvent({ type: 't', payload: {}, schedule: { delay: 1, dateTime: new Date().toISOString() } })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(client.createEvent({ type: 't', payload: {}, conversationId: 'nope' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.createEvent({ type: 't', payload: {}, workflowId: 'nope' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const other = await runtimeBot(h)
    const theirs = await other.converse()
    await expect(client.createEvent({ type: 't', payload: {}, conversationId: theirs.conversationId })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const { event } = await other.client.createEvent({ type: 'private', payload: {}, schedule: { delay: 3_600_000 } })
    await expect(client.getEvent({ id: event.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.cancelScheduledEvent({ id: event.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    expect((await client.listEvents({ type: 'private' })).events).toEqual([])
    const { event: theirChat } = await theirs.user.createEvent({ conversationId: theirs.conversationId, payload: {} })
    await expect(client.getEvent({ id: theirChat.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })
})
