/**
 * Hooks that change and stop payloads, through the official clients: what beforeIncoming changes
 * is what is stored and delivered (createMessage's answer, getMessage, listMessages, the stream);
 * a message it stops is stored but never answered; beforeOutgoing changes or suppresses the bot's
 * replies; a hook that throws or returns an invalid payload leaves the original in place.
 */
import * as chat from '@botpress/chat'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { allLogs, createBot, listAll, Talk, textOf, waitForLog, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  beforeIncoming({ event }) {
    if (event.type === 'custom') {
      if (String(event.payload.name).startsWith('probe')) console.log('beforeIncoming saw ' + event.payload.name)
      if (event.payload.name === 'drop') return { stop: true }
      event.payload.seenBy = 'beforeIncoming'
      return
    }
    if (event.type !== 'text') return
    const t = event.payload.text
    if (t.startsWith('probe')) console.log('beforeIncoming saw ' + t)
    if (t.startsWith('drop')) return { stop: true }
    if (t.startsWith('shout ')) event.payload.text = t.slice(6).toUpperCase()
    if (t === 'to-markdown') event.payload = { type: 'markdown', markdown: '**changed** by the hook' }
    if (t === 'invalid') event.payload = { type: 'text', text: 42 }
    if (t === 'not-an-object') event.payload = 'nope'
    if (t === 'throw') { event.payload.text = 'half-changed'; throw new Error('beforeIncoming boom') }
  },
  async afterIncoming({ event, client }) {
    if (event.type === 'custom') {
      await client.createMessage({ payload: { type: 'text', text: 'custom ' + JSON.stringify(event.payload) } })
      return
    }
    const r = await client.createMessage({ payload: { type: 'text', text: 'got ' + event.preview } })
    if (event.preview === 'secret') await client.createMessage({ payload: { type: 'text', text: 'suppressed: ' + (r.message === null) } })
    if (event.preview === 'outgoing-throw') await client.createMessage({ payload: { type: 'text', text: 'explode' } })
    if (event.preview === 'outgoing-image') await client.createMessage({ payload: { type: 'text', text: 'make me an image' } })
  },
  beforeOutgoing({ event }) {
    if (event.type !== 'text') return
    if (event.payload.text === 'got secret') return { stop: true }
    if (event.payload.text === 'explode') { event.payload.text = 'never sent'; throw new Error('beforeOutgoing boom') }
    if (event.payload.text === 'make me an image') { event.payload = { type: 'image', imageUrl: 'https://example.com/x.png' }; return }
    event.payload.text += ' [signed]'
  },
}
`

describe('runtime: hooks change and stop payloads', () => {
  let h: Harness
  let bot: TestBot
  let talk: Talk

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
    talk = await Talk.open(bot)
  })
  afterAll(async () => {
    await talk?.close()
    await h?.close()
  })

  /** The stream's message_created signal for a message id. */
  const streamed = async (id: string) => {
    await talk.until(() => talk.messages.some((m) => m.id === id), `message ${id} on the stream`)
    return talk.messages.find((m) => m.id === id)!
  }

  it('beforeIncoming changes the text: the changed payload is stored, returned, listed, streamed and answered', async () => {
    const before = talk.botMessages().length
    const created = await talk.say('shout hello there')
    expect(created.payload).toEqual({ type: 'text', text: 'HELLO THERE' })
    expect((await talk.user.getMessage({ id: created.id })).message.payload).toEqual({ type: 'text', text: 'HELLO THERE' })
    expect((await streamed(created.id)).payload).toEqual({ type: 'text', text: 'HELLO THERE' })
    expect((await listAll(talk.user, talk.conversationId)).find((m) => m.id === created.id)!.payload).toEqual({ type: 'text', text: 'HELLO THERE' })
    const replies = (await talk.botCount(before + 1)).slice(before)
    expect(replies.map(textOf)).toEqual(['got HELLO THERE [signed]'])
  })

  it('beforeIncoming replaces the payload with another type', async () => {
    const before = talk.botMessages().length
    const created = await talk.say('to-markdown')
    expect(created.payload).toEqual({ type: 'markdown', markdown: '**changed** by the hook' })
    expect((await talk.user.getMessage({ id: created.id })).message.payload).toEqual({ type: 'markdown', markdown: '**changed** by the hook' })
    const replies = (await talk.botCount(before + 1)).slice(before)
    expect(replies.map(textOf)).toEqual(['got changed by the hook [signed]'])
  })

  it('an invalid payload from beforeIncoming is refused: the original is stored, the refusal logged', async () => {
    for (const text of ['invalid', 'not-an-object']) {
      const before = talk.botMessages().length
      const created = await talk.say(text)
      expect(created.payload).toEqual({ type: 'text', text })
      const replies = (await talk.botCount(before + 1)).slice(before)
      expect(replies.map(textOf)).toEqual([`got ${text} [signed]`])
    }
    await waitForLog(h, bot.id, (l) => l.level === 'error' && /invalid payload|must stay/.test(l.message) && l.conversationId === talk.conversationId)
  })

  it('beforeIncoming throwing keeps the original payload (not its half-done change) and records the error', async () => {
    const before = talk.botMessages().length
    const created = await talk.say('throw')
    expect(created.payload).toEqual({ type: 'text', text: 'throw' })
    const replies = (await talk.botCount(before + 1)).slice(before)
    expect(replies.map(textOf)).toEqual(['got throw [signed]'])
    await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes('beforeIncoming boom'))
  })

  it('beforeIncoming { stop: true }: the message is stored and streamed but never answered', async () => {
    const before = talk.botMessages().length
    const dropped = await talk.say('drop this one')
    expect(dropped.payload).toEqual({ type: 'text', text: 'drop this one' })
    expect((await talk.user.getMessage({ id: dropped.id })).message.id).toBe(dropped.id)
    expect((await streamed(dropped.id)).isBot).toBe(false)
    // turns run in message order: once the next message is answered, the dropped one would have been too
    await talk.say('after the drop')
    const replies = (await talk.botCount(before + 1)).slice(before)
    expect(replies.map(textOf)).toEqual(['got after the drop [signed]'])
    expect((await talk.quiet(300)).length).toBe(0)
    const all = await listAll(talk.user, talk.conversationId)
    expect(all.some((m) => m.id === dropped.id)).toBe(true)
    expect(all.filter((m) => textOf(m).includes('drop this one'))).toHaveLength(1)
  })

  it('beforeOutgoing { stop: true }: the reply never appears; createMessage resolves { message: null }', async () => {
    const before = talk.botMessages().length
    await talk.say('secret')
    const replies = (await talk.botCount(before + 1)).slice(before)
    expect(replies.map(textOf)).toEqual(['suppressed: true [signed]'])
    expect((await talk.quiet(300)).length).toBe(0)
    const all = await listAll(talk.user, talk.conversationId)
    expect(all.filter((m) => textOf(m).startsWith('got secret'))).toEqual([])
  })

  it('beforeOutgoing changes the reply (text, or another payload type); throwing sends the original', async () => {
    let before = talk.botMessages().length
    await talk.say('outgoing-throw')
    let replies = (await talk.botCount(before + 2)).slice(before)
    expect(replies.map(textOf)).toEqual(['got outgoing-throw [signed]', 'explode'])
    await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes('beforeOutgoing boom'))

    before = talk.botMessages().length
    await talk.say('outgoing-image')
    replies = (await talk.botCount(before + 2)).slice(before)
    expect(replies[1]!.payload).toEqual({ type: 'image', imageUrl: 'https://example.com/x.png' })
    const stored = await talk.user.getMessage({ id: replies[1]!.id })
    expect(stored.message.payload).toEqual({ type: 'image', imageUrl: 'https://example.com/x.png' })
  })

  it('events created by bot code reach the listener once each (isBot), with ids of their own per turn', async () => {
    const eventBot = await createBot(h, String.raw`
      export const hooks = {
        async afterIncoming({ event, client }) {
          if (event.type !== 'text') return
          await client.createEvent({ payload: { n: 1, of: event.payload.text } })
          await client.createEvent({ payload: { n: 2, of: event.payload.text } })
          await client.createMessage({ payload: { type: 'text', text: 'done ' + event.payload.text } })
        },
      }
    `)
    const own = await Talk.open(eventBot)
    try {
      expect(await own.askText('one')).toEqual(['done one'])
      expect(await own.askText('two')).toEqual(['done two'])
      await own.until(() => own.events.length >= 4, 'the 4 bot events')
      expect(own.events.map((e) => e.payload)).toEqual([{ n: 1, of: 'one' }, { n: 2, of: 'one' }, { n: 1, of: 'two' }, { n: 2, of: 'two' }])
      expect(own.events.every((e) => e.isBot === true)).toBe(true)
      expect(new Set(own.events.map((e) => e.id)).size).toBe(4)
      expect((await own.quiet(300)).length).toBe(0)
      expect(own.events).toHaveLength(4)
    } finally {
      await own.close()
    }
  })

  it('custom events: beforeIncoming changes the stored payload, or stops the event', async () => {
    const before = talk.botMessages().length
    const created = await talk.event({ name: 'cart', items: 2 })
    expect(created.payload).toEqual({ name: 'cart', items: 2, seenBy: 'beforeIncoming' })
    expect((await talk.user.getEvent({ id: created.id })).event.payload).toEqual({ name: 'cart', items: 2, seenBy: 'beforeIncoming' })
    await talk.until(() => talk.events.some((e) => e.id === created.id), 'the event on the stream')
    expect(talk.events.find((e) => e.id === created.id)!.payload).toEqual({ name: 'cart', items: 2, seenBy: 'beforeIncoming' })
    let replies = (await talk.botCount(before + 1)).slice(before)
    expect(replies.map(textOf)).toEqual([`custom ${JSON.stringify({ name: 'cart', items: 2, seenBy: 'beforeIncoming' })} [signed]`])

    const dropped = await talk.event({ name: 'drop' })
    expect((await talk.user.getEvent({ id: dropped.id })).event.payload).toEqual({ name: 'drop' })
    await talk.say('after the dropped event')
    replies = (await talk.botCount(before + 2)).slice(before + 1)
    expect(replies.map(textOf)).toEqual(['got after the dropped event [signed]'])
  })

  it('beforeIncoming never runs for a caller who may not post: 403 for a non-participant, 404 for an unknown conversation', async () => {
    const outsider = await chat.Client.connect({ apiUrl: bot.url })
    const text = (t: string) => ({ type: 'text' as const, text: t })
    await expect(outsider.createMessage({ conversationId: talk.conversationId, payload: text('probe-outsider') })).rejects.toMatchObject({ code: 403 })
    await expect(outsider.createEvent({ conversationId: talk.conversationId, payload: { name: 'probe-outsider-event' } })).rejects.toMatchObject({ code: 403 })
    await expect(talk.user.createMessage({ conversationId: 'no-such-conversation', payload: text('probe-unknown') })).rejects.toMatchObject({ code: 404 })
    await expect(talk.user.createEvent({ conversationId: 'no-such-conversation', payload: { name: 'probe-unknown-event' } })).rejects.toMatchObject({ code: 404 })
    // the hook runs for a participant; its log line comes after the refused ones would have
    await talk.say('probe-participant')
    await waitForLog(h, bot.id, (l) => l.message.includes('beforeIncoming saw probe-participant'))
    const seen = (await allLogs(h, bot.id)).logs.filter((l) => l.message.includes('beforeIncoming saw probe'))
    expect(seen.map((l) => l.message)).toEqual(['beforeIncoming saw probe-participant'])
  })
})
