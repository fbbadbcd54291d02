/**
 * Where callAction goes (#25 item 4), as Botpress routes it: `<alias>:<action>` to the bot's integration of that
 * alias, never to the bot's own url. The bot's url is a real receiver (test/helpers/bot-receiver.ts) that counts
 * the action_triggered requests it gets; the user is the official @botpress/chat client with a listener, the bot
 * the official @botpress/client with a bot API key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { adminClient, createBot, STREAM_CONFIG, Talk, uid, type TestBot } from './helpers.js'

const ACTION = { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } }

describe('callAction routing', () => {
  let h: Harness
  let receiver: BotReceiver
  let bot: TestBot
  const actionPosts = () => receiver.requests.filter((r) => r.headers['x-bp-operation'] === 'action_triggered')

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: { timeoutMs: 5_000, budgetMs: 20_000, attempts: 1, backoffMs: 50, maxBackoffMs: 100 } } })
    receiver = await startBotReceiver((req) => (req.headers['x-bp-operation'] === 'action_triggered' ? { body: JSON.stringify({ output: { ran: req.body?.type } }) } : { status: 200 }))
    bot = await createBot(h)
    await adminClient(h).updateBot({ id: bot.id, url: receiver.url })
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  it('chat:sendEvent: the built-in chat integration sends the bot\'s custom event to the chat client\'s listener; the bot\'s url gets nothing', async () => {
    const talk = await Talk.open(bot, { userId: uid('user') })
    try {
      const client = await runtimeClient(h, bot.id)
      const before = actionPosts().length
      const result = await client.callAction({ type: 'chat:sendEvent', input: { conversationId: talk.conversationId, payload: { kind: 'typing-done', n: 1 } } })
      expect(result.output).toEqual({})
      await talk.until(() => talk.events.length > 0, 'the event on the listener')
      const event = talk.events[0]!
      expect(event).toMatchObject({ conversationId: talk.conversationId, userId: bot.id, payload: { kind: 'typing-done', n: 1 }, isBot: true })
      expect(actionPosts().length).toBe(before)
      // Its input as the chat integration's definition declares it; other actions of the built-in chat: 404.
      expect(await failure(client.callAction({ type: 'chat:sendEvent', input: { conversationId: talk.conversationId } }))).toMatchObject({ code: 400, type: 'InvalidPayload' })
      expect(await failure(client.callAction({ type: 'chat:sendEvent', input: { conversationId: 'no-such-conversation', payload: {} } }))).toMatchObject({ code: 404, type: 'ResourceNotFound' })
      const other = await failure(client.callAction({ type: 'chat:getUser', input: {} }))
      expect(other).toMatchObject({ code: 404, type: 'ResourceNotFound' })
      expect(other.message).toContain('sendEvent')
      expect(actionPosts().length).toBe(before)
    } finally {
      await talk.close()
    }
  })

  it('an alias the bot has no integration of answers 404 ResourceNotFound and is never POSTed to the bot\'s url', async () => {
    const client = await runtimeClient(h, bot.id)
    const before = actionPosts().length
    const err = await failure(client.callAction({ type: 'slack:postMessage', input: {} }))
    expect(err).toMatchObject({ code: 404, type: 'ResourceNotFound' })
    expect(err.message).toContain('no integration installed as "slack"')
    // The built-in webhook is not enabled on this bot: the same.
    expect(await failure(client.callAction({ type: 'webhook:anything', input: {} }))).toMatchObject({ code: 404, type: 'ResourceNotFound' })
    expect(actionPosts().length).toBe(before)
  })

  it('an action the bot\'s definition does not declare is refused (404) before delivery; a declared one is delivered', async () => {
    const admin = adminClient(h)
    const client = await runtimeClient(h, bot.id)
    // Undeclared (no `actions` ever sent): delivered as before.
    expect((await client.callAction({ type: 'anything', input: {} })).output).toEqual({ ran: 'anything' })
    await admin.updateBot({ id: bot.id, actions: { multiply: ACTION } } as never)
    expect((await admin.getBot({ id: bot.id })).bot.actions).toEqual({ multiply: ACTION })
    const before = actionPosts().length
    const err = await failure(client.callAction({ type: 'divide', input: {} }))
    expect(err).toMatchObject({ code: 404, type: 'ResourceNotFound' })
    expect(err.message).toContain('does not declare it (its actions: multiply)')
    expect(actionPosts().length).toBe(before)
    expect((await client.callAction({ type: 'multiply', input: {} })).output).toEqual({ ran: 'multiply' })
    expect(actionPosts().length).toBe(before + 1)
    // A removal as `bp deploy` sends it (null).
    await admin.updateBot({ id: bot.id, actions: { multiply: null } } as never)
    expect(await failure(client.callAction({ type: 'multiply', input: {} }))).toMatchObject({ code: 404 })
    expect(actionPosts().length).toBe(before + 1)
    expect((await failure(admin.updateBot({ id: bot.id, actions: { 'a:b': ACTION } } as never))).code).toBe(400)
  })
})
