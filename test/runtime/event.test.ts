/**
 * The spec's "Event object" as bot code sees it, end to end: a bot deployed with the official admin
 * client's updateBot({ id, code }), talked to with the official chat client. The hooks send each event
 * back (afterIncoming as a JSON message, the others with console.log read back through getBotLogs) and
 * every field is checked for a user message, a Chat API custom event, an outgoing message
 * (beforeOutgoing / afterOutgoing) and a turn started by a workflow trigger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { allLogs, createBot, ISO_Z, jsonAfter, sleep, Talk, uid, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
const dump = (event) => JSON.stringify({ event, keys: Object.keys(event), hasMessageId: event.messageId !== undefined, hasTrigger: event.trigger !== undefined })
export const hooks = {
  beforeIncoming({ event }) { console.log('EV beforeIncoming ' + dump(event)) },
  async afterIncoming({ event, client, state }) {
    console.log('EV afterIncoming ' + dump(event))
    if (event.type === 'text' && event.payload.text === 'flow') return
    await client.createMessage({ payload: { type: 'text', text: 'EVENT ' + dump(event) } })
    if (event.type === 'text' && event.payload.text === 'reply') await client.createMessage({ payload: { type: 'text', text: 'pong' } })
  },
  beforeOutgoing({ event }) { if (event.preview === 'pong' || event.preview === 'from the flow') console.log('EV beforeOutgoing ' + dump(event)) },
  afterOutgoing({ event }) { if (event.preview === 'pong' || event.preview === 'from the flow') console.log('EV afterOutgoing ' + dump(event)) },
  afterTurnEnd({ event, state }) {
    console.log('EV afterTurnEnd ' + dump(event))
    state.user.turns = (state.user.turns || 0) + 1
    state.conversation.turns = (state.conversation.turns || 0) + 1
    state.bot.turns = (state.bot.turns || 0) + 1
  },
}
export const workflows = {
  greet: {
    trigger: { type: 'message', text: 'flow' },
    start: 'first',
    nodes: { first: { cards: [{ type: 'say', text: 'from the flow' }] } },
  },
}
`

type Dumped = { event: Record<string, any>; keys: string[]; hasMessageId: boolean; hasTrigger: boolean }

describe('runtime: the event object seen by hooks', () => {
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
  })
  afterAll(async () => h?.close())

  /**
   * The dumps logged by `hook` in a conversation, in order, once there are `count` of them (a turn's
   * logs are written when the turn ends, which may be after its replies were delivered).
   */
  async function logged(conversationId: string, hook: string, count = 1): Promise<Dumped[]> {
    const deadline = Date.now() + 8000
    for (;;) {
      const { logs } = await allLogs(h, bot.id)
      const found = logs
        .filter((l) => l.conversationId === conversationId && l.message.startsWith(`EV ${hook} `))
        .map((l) => JSON.parse(l.message.slice(`EV ${hook} `.length)) as Dumped)
      if (found.length >= count || Date.now() > deadline) return found
      await sleep(50)
    }
  }

  function expectCommon(event: Record<string, any>, talk: Talk) {
    expect(event.botId).toBe(bot.id)
    expect(event.conversationId).toBe(talk.conversationId)
    expect(event.integration).toBe('chat')
    expect(typeof event.id).toBe('string')
    expect(event.id.length).toBeGreaterThan(0)
    expect(event.createdOn).toMatch(ISO_Z)
    expect(new Date(event.createdOn).toISOString()).toBe(event.createdOn)
    expect(Math.abs(Date.parse(event.createdOn) - Date.now())).toBeLessThan(60_000)
    // state: user, conversation and bot objects
    expect(event.state).toEqual(expect.objectContaining({ user: expect.any(Object), conversation: expect.any(Object), bot: expect.any(Object) }))
    for (const k of ['user', 'conversation', 'bot']) expect(Array.isArray(event.state[k])).toBe(false)
    // tags: conversation, message and user objects
    expect(event.tags).toEqual({ conversation: expect.any(Object), message: expect.any(Object), user: expect.any(Object) })
  }

  it('a user message: every field, in beforeIncoming, afterIncoming and afterTurnEnd', async () => {
    const talk = await Talk.open(bot, { userId: uid('ann') })
    try {
      const sent = await talk.say('hello world')
      const [reply] = await talk.botCount(1)
      await talk.ask('reply', 2)
      const first = jsonAfter<Dumped>(reply!.payload.text as string, 'EVENT ')
      const e = first.event
      expectCommon(e, talk)
      expect(e.direction).toBe('incoming')
      expect(e.id).toBe(sent.id)
      expect(e.messageId).toBe(sent.id)
      expect(e.createdOn).toBe(sent.createdAt)
      expect(e.payload).toEqual({ type: 'text', text: 'hello world' })
      expect(e.preview).toBe('hello world')
      expect(e.type).toBe('text')
      expect(e.userId).toBe(talk.user.user.id)
      expect(first.hasTrigger).toBe(false) // no workflow trigger fired for this message
      // the first turn of the conversation and of this user: empty state
      expect(e.state.user).toEqual({})
      expect(e.state.conversation).toEqual({})
      for (const key of ['botId', 'conversationId', 'createdOn', 'direction', 'id', 'integration', 'messageId', 'payload', 'preview', 'state', 'tags', 'type', 'userId']) {
        expect(first.keys).toContain(key)
      }

      // beforeIncoming: the same event before storage (same id and message id, createdOn taken at receipt)
      const before = await logged(talk.conversationId, 'beforeIncoming', 2)
      expect(before).toHaveLength(2)
      const b = before[0]!.event
      expectCommon(b, talk)
      expect(b).toMatchObject({ direction: 'incoming', id: sent.id, messageId: sent.id, type: 'text', preview: 'hello world', userId: talk.user.user.id, payload: { type: 'text', text: 'hello world' } })
      expect(Math.abs(Date.parse(b.createdOn) - Date.parse(sent.createdAt))).toBeLessThan(2000)

      // afterTurnEnd sees the same event; the second turn sees the state the first one saved
      const ends = await logged(talk.conversationId, 'afterTurnEnd', 2)
      expect(ends).toHaveLength(2)
      expect(ends[0]!.event.id).toBe(sent.id)
      expect(ends[1]!.event.state.conversation.turns).toBe(1)
      expect(ends[1]!.event.state.user.turns).toBe(1)
      expect(ends[1]!.event.state.bot.turns).toBeGreaterThanOrEqual(1)
      // event ids are unique per event
      expect(ends[1]!.event.id).not.toBe(ends[0]!.event.id)
    } finally {
      await talk.close()
    }
  })

  it('a Chat API custom event: type "custom", the event payload, no messageId, a JSON preview', async () => {
    const talk = await Talk.open(bot)
    try {
      const created = await talk.event({ name: 'cart.updated', items: 3, nested: { ok: true } })
      const [reply] = await talk.botCount(1)
      const { event: e, hasMessageId } = jsonAfter<Dumped>(reply!.payload.text as string, 'EVENT ')
      expectCommon(e, talk)
      expect(e.direction).toBe('incoming')
      expect(e.type).toBe('custom')
      expect(e.id).toBe(created.id)
      expect(hasMessageId).toBe(false)
      expect(e.payload).toEqual({ name: 'cart.updated', items: 3, nested: { ok: true } })
      expect(e.preview).toBe(JSON.stringify({ name: 'cart.updated', items: 3, nested: { ok: true } }))
      expect(e.userId).toBe(talk.user.user.id)
      expect(e.createdOn).toBe(created.createdAt)

      const [b] = await logged(talk.conversationId, 'beforeIncoming')
      expect(b!.event).toMatchObject({ type: 'custom', id: created.id, payload: { name: 'cart.updated', items: 3 }, direction: 'incoming' })
      expect(b!.hasMessageId).toBe(false)
    } finally {
      await talk.close()
    }
  })

  it('an outgoing message: beforeOutgoing (no messageId/userId yet) and afterOutgoing (the stored message)', async () => {
    const talk = await Talk.open(bot, { userId: uid('bob') })
    try {
      const sent = await talk.say('reply')
      const replies = await talk.botCount(2)
      const pong = replies.find((m) => m.payload.text === 'pong')!
      expect(pong).toBeDefined()

      const [before] = await logged(talk.conversationId, 'beforeOutgoing')
      const [after] = await logged(talk.conversationId, 'afterOutgoing')
      const [incoming] = await logged(talk.conversationId, 'afterIncoming')
      for (const { event } of [before!, after!]) {
        expectCommon(event, talk)
        expect(event.direction).toBe('outgoing')
        expect(event.type).toBe('text')
        expect(event.payload).toEqual({ type: 'text', text: 'pong' })
        expect(event.preview).toBe('pong')
        expect(event.id).not.toBe(sent.id)
        // the same state as the incoming event of the turn
        expect(event.state).toEqual(incoming!.event.state)
      }
      expect(before!.hasMessageId).toBe(false)
      expect(before!.event.userId).toBeUndefined()
      // one outgoing event: the same id before and after
      expect(after!.event.id).toBe(before!.event.id)
      expect(after!.event.messageId).toBe(pong.id)
      expect(after!.event.userId).toBe(pong.userId)
      expect(after!.event.createdOn).toBe(pong.createdAt)
      expect(after!.keys).toContain('messageId')
      // the stored reply really is the bot's
      expect(pong.isBot).toBe(true)
      expect(pong.userId).not.toBe(talk.user.user.id)
    } finally {
      await talk.close()
    }
  })

  it('a turn started by a workflow trigger: event.trigger in afterIncoming, afterTurnEnd and the outgoing events', async () => {
    const talk = await Talk.open(bot, { userId: uid('cid') })
    try {
      await talk.say('flow')
      const [said] = await talk.botCount(1)
      expect(said!.payload).toEqual({ type: 'text', text: 'from the flow' })
      const expected = {
        flowId: 'greet',
        nodeId: 'first',
        eventName: 'message',
        conversationId: talk.conversationId,
        userId: talk.user.user.id,
        integration: 'chat',
      }
      const [incoming] = await logged(talk.conversationId, 'afterIncoming')
      expect(incoming!.event.trigger).toEqual(expected)
      expect(incoming!.keys).toContain('trigger')
      const [end] = await logged(talk.conversationId, 'afterTurnEnd')
      expect(end!.event.trigger).toEqual(expected)
      const [before] = await logged(talk.conversationId, 'beforeOutgoing')
      const [after] = await logged(talk.conversationId, 'afterOutgoing')
      expect(before!.event.trigger).toEqual(expected)
      expect(after!.event.trigger).toEqual(expected)
      expect(after!.event.messageId).toBe(said!.id)
      // beforeIncoming runs before any trigger: no trigger there
      const [b] = await logged(talk.conversationId, 'beforeIncoming')
      expect(b!.hasTrigger).toBe(false)
      // the workflow variables are part of the state while a flow runs
      expect(incoming!.event.state.workflow).toEqual({})
    } finally {
      await talk.close()
    }
  })
})
