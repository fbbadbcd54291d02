/**
 * The integration operations beyond messages, with an unchanged @botpress/sdk@5.4.3 integration
 * (test/fixtures/sdk-integrations/operations.mjs) run as a child process over real HTTP, started with
 * `--import parley/integration-secrets` (its secret values in SECRET_<NAME>): ping, create_user and
 * create_conversation when the bot starts a conversation on a channel, callAction from sandboxed bot
 * code (and its errors), integration events reaching the bot's hooks as `alias:event`, integration
 * states per installation, disabledChannels refused visibly, secrets given to the integration only.
 */
import { fileURLToPath } from 'node:url'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/operations.definition.mjs'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import type { SdkBot } from '../helpers/sdk-bot.js'
import { hostSdkIntegration, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { adminClient, allLogs, createBot, STREAM_CONFIG, Talk, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 10_000, attempts: 2, backoffMs: 100, maxBackoffMs: 200 }
const SECRETS_LOADER = fileURLToPath(new URL('../../integration-secrets.mjs', import.meta.url))
const SECRET_VALUE = 'sk-the-integration-only-9f3a'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'ops:ticketOpened') {
      console.log('TICKET ' + JSON.stringify({ type: event.type, payload: event.payload, conversationId: event.conversationId || null }))
      return
    }
    if (event.type !== 'text') return
    const text = event.payload.text
    const reply = (t) => client.createMessage({ payload: { type: 'text', text: t } })
    const m = text.match(/^call (\S+)\s*(.*)$/)
    if (m) {
      try {
        const r = await client.callAction({ type: m[1], input: m[2] ? JSON.parse(m[2]) : {} })
        await reply('OK ' + JSON.stringify(r.output))
      } catch (e) {
        await reply('ERR ' + e.message)
      }
      return
    }
    const start = text.match(/^start (\S+)$/)
    if (start) {
      try {
        const { user } = await client.getOrCreateUser({ integrationName: 'ops', tags: { id: start[1] } })
        const { conversation } = await client.getOrCreateConversation({ integrationName: 'ops', channel: 'dm', tags: { id: 'dm-' + start[1] } })
        await client.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hi ' + start[1] + ' from the sandbox' } })
        await reply('STARTED ' + JSON.stringify({ user: { id: user.id, name: user.name, tags: user.tags }, conversation: { id: conversation.id, integration: conversation.integration, channel: conversation.channel, tags: conversation.tags } }))
      } catch (e) {
        await reply('ERR ' + e.message)
      }
    }
  },
}
`

describe('integration operations of an unchanged @botpress/sdk integration', () => {
  let h: Harness
  let outside: OutsideChat
  let program: SdkBot
  let bot: TestBot
  let integrationId: string
  let webhookUrl: string
  let botClient: Client
  let talk: Talk

  const hook = async (body: Record<string, unknown>) => {
    const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) as Record<string, any> : {} }
  }
  const lastReply = async (text: string) => (await talk.askText(text))[0]!

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    outside = await startOutsideChat()
    ;({ integrationId, program, bot, webhookUrl } = await hostSdkIntegration(h, {
      definition, script: '../sdk-integrations/operations.mjs', alias: 'ops', code: CODE,
      installation: { configuration: { serviceUrl: outside.url }, disabledChannels: ['group'] },
      secrets: { API_KEY: SECRET_VALUE }, env: { NODE_OPTIONS: `--import ${SECRETS_LOADER}` },
    }))
    botClient = await runtimeClient(h, bot.id)
    talk = await Talk.open(bot, { userId: 'tester' })
  })
  afterAll(async () => {
    await talk?.close()
    await program?.stop()
    await outside?.close()
    await h?.close()
  })

  it('ping: an admin checks an installation; the outcome is in the integration\'s logs; a dead integration answers ok: false', async () => {
    const admin = adminClient(h)
    const ping = (alias: string) => fetch(`${h.baseUrl}/v1/admin/bots/${bot.id}/integrations/${alias}/ping`, {
      method: 'POST', headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
    })
    const ok = await ping('ops')
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ ok: true, status: 200, message: 'The integration answered ping' })
    const { logs } = await admin.getIntegrationLogs({ id: integrationId, timeStart: new Date(0).toISOString() })
    expect(logs.some((l) => l.level === 'info' && l.message.includes('ping (bot') && l.message.includes('alias ops'))).toBe(true)
    expect((await ping('nope')).status).toBe(404)
    expect((await ping('chat')).status).toBe(404)

    await program.stop()
    try {
      const down = (await (await ping('ops')).json()) as { ok: boolean; status?: number; message: string }
      expect(down.ok).toBe(false)
      expect(down.status).toBeUndefined()
      expect(down.message).toMatch(/could not be reached/)
    } finally {
      await program.start()
    }
  })

  it('create_user / create_conversation: the bot starts a conversation on a channel; the integration creates both and the bot\'s message reaches the outside', async () => {
    const started = await lastReply('start carol')
    expect(started).toMatch(/^STARTED /)
    const { user, conversation } = JSON.parse(started.slice('STARTED '.length))
    // Created by the integration's own handlers (the name is theirs), in its installation.
    expect(user).toMatchObject({ name: 'outside carol', tags: { id: 'carol' } })
    expect(conversation).toMatchObject({ integration: 'ops', channel: 'dm', tags: { id: 'dm-carol' } })
    // Asked again: the same rows (found, the integration is not asked twice).
    expect(JSON.parse((await lastReply('start carol')).slice('STARTED '.length))).toEqual({ user, conversation })

    // The sandboxed code wrote in it from the chat turn: out through the integration to the outside service.
    expect((await outside.waitFor(() => outside.sent.find((s) => s.text === 'hi carol from the sandbox'), 'the sandbox\'s message')).chatId).toBe('dm-carol')
    // The bot writes in it through the Runtime API too: message_created to the integration, which sends it to the outside service.
    await botClient.createMessage({ conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'hello carol' }, tags: {} })
    const sent = await outside.waitFor(() => outside.sent.find((s) => s.text === 'hello carol'), 'the proactive message')
    expect(sent.chatId).toBe('dm-carol')

    // Through the Runtime API as well (createUser / createConversation with integrationName).
    const made = await botClient.createUser({ integrationName: 'ops', tags: { id: 'dave' } } as never)
    expect(made.user).toMatchObject({ name: 'outside dave', tags: { id: 'dave' } })
    const conv = await botClient.createConversation({ integrationName: 'ops', channel: 'dm', tags: { id: 'dm-dave' } })
    expect(conv.conversation).toMatchObject({ integration: 'ops', channel: 'dm', tags: { id: 'dm-dave' } })
    // The definition's requiredTags, and a channel the integration does not have: clear 400s.
    expect(await failure(botClient.createUser({ integrationName: 'ops', tags: { other: 'x' } } as never))).toMatchObject({ code: 400, message: expect.stringMatching(/id required/) })
    expect(await failure(botClient.createConversation({ integrationName: 'ops', channel: 'sms', tags: { id: 'x' } }))).toMatchObject({ code: 400, message: expect.stringMatching(/no channel "sms"/) })
    // The integration down: the bot is told, nothing is created behind its back.
    await program.stop()
    try {
      expect(await failure(botClient.createUser({ integrationName: 'ops', tags: { id: 'frank' } } as never)))
        .toMatchObject({ code: 504, type: 'OperationTimeout', message: expect.stringMatching(/Integration "ops" did not answer create_user/) })
    } finally {
      await program.start()
    }
    const frank = await botClient.getOrCreateUser({ integrationName: 'ops', tags: { id: 'frank' } } as never)
    expect(frank).toMatchObject({ user: { name: 'outside frank' }, meta: { created: true } })
  })

  it('callAction from sandboxed bot code: the output, and clear errors (unknown alias or action, invalid input or output, integration down)', async () => {
    expect(await lastReply('call ops:lookup {"q":"weather"}')).toBe('OK {"answer":"weather looked up"}')
    expect(await lastReply('call nope:lookup {"q":"x"}')).toMatch(/^ERR .*Action "nope:lookup" not found: the bot has no integration installed as "nope"/)
    expect(await lastReply('call ops:nothing')).toMatch(/^ERR .*Action "ops:nothing" not found/)
    expect(await lastReply('call ops:lookup {"q":7}')).toMatch(/^ERR .*input of action "ops:lookup" does not match its schema: input\.q must be string/)
    expect(await lastReply('call ops:broken')).toMatch(/^ERR .*the integration's output does not match the action's output schema: output\.answer must be string/)
    expect(await lastReply('call lookup')).toMatch(/^ERR .*is not an integration action: name it "alias:action"/)
    // The same checks on the Runtime API's callAction (one domain path).
    expect(await failure(botClient.callAction({ type: 'ops:broken', input: {} }))).toMatchObject({ code: 400, type: 'Runtime' })

    await program.stop()
    try {
      expect(await lastReply('call ops:lookup {"q":"x"}')).toMatch(/^ERR .*did not answer action "ops:lookup"/)
    } finally {
      await program.start()
    }
  })

  it('events: an event the integration raises reaches the bot\'s hooks as alias:event, with or without a conversation; undeclared types and bad payloads are 400', async () => {
    const alone = await hook({ kind: 'event', ticket: 'T-1' })
    expect(alone.status).toBe(200)
    expect(alone.body.type).toBe('ops:ticketOpened')
    const { conversation } = await botClient.getOrCreateConversation({ integrationName: 'ops', channel: 'dm', tags: { id: 'dm-events' } })
    expect((await hook({ kind: 'event', ticket: 'T-2', conversationId: conversation.id })).status).toBe(200)

    const seen = async () => {
      for (let i = 0; i < 100; i++) {
        const tickets = (await allLogs(h, bot.id)).logs.filter((l) => l.message.startsWith('TICKET ')).map((l) => JSON.parse(l.message.slice(7)))
        if (tickets.length >= 2) return tickets
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error('the bot did not see both events')
    }
    const tickets = await seen()
    expect(tickets).toContainEqual({ type: 'ops:ticketOpened', payload: { ticket: 'T-1' }, conversationId: null })
    expect(tickets).toContainEqual({ type: 'ops:ticketOpened', payload: { ticket: 'T-2' }, conversationId: conversation.id })

    // Only into its own installation's conversations: the bot's chat conversation is not found for it (a 404,
    // which the SDK's handler answers as a Runtime error with Parley's message).
    const intoChat = await hook({ kind: 'event', ticket: 'T-3', conversationId: talk.conversationId })
    expect(intoChat.body.message).toBe(`Conversation "${talk.conversationId}" not found`)
    const undeclared = await hook({ kind: 'event', type: 'somethingElse', payload: {} })
    expect(undeclared.status).toBe(400)
    expect(undeclared.body.message).toMatch(/not an event of integration "outside-operations" \(its events: ticketOpened\)/)
    const badPayload = await hook({ kind: 'event', payload: { ticket: 5 } })
    expect(badPayload.status).toBe(400)
    expect(badPayload.body.message).toMatch(/payload of event "ticketOpened" does not match its schema/)
  })

  it('states: the integration\'s own state (its definition\'s states), per installation, apart from the bot\'s', async () => {
    expect((await hook({ kind: 'count' })).body).toEqual({ n: 1, name: 'counter' })
    expect((await hook({ kind: 'count' })).body).toEqual({ n: 2, name: 'counter' })
    const bad = await hook({ kind: 'badState' })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toMatch(/does not match the schema of state "counter"/)
    // A second bot with the same integration: its own installation, its own counter.
    const other = await createBot(h, CODE)
    const admin = adminClient(h)
    await admin.updateBot({ id: other.id, integrations: { ops: { integrationId, configuration: { serviceUrl: outside.url } } } } as never)
    const otherUrl = (await admin.getBot({ id: other.id })).bot.integrations.ops!.webhookUrl
    const res = await fetch(otherUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'count' }) })
    expect(await res.json()).toEqual({ n: 1, name: 'counter' })
    // The bot's own states are its own declarations: the integration's `counter` is not one of them.
    expect(await failure(botClient.getState({ type: 'integration', id: 'ops', name: 'counter' }))).toMatchObject({ code: 400 })
  })

  it('disabledChannels: getBot shows them; a message on a disabled channel is refused with a clear error and logged, not dropped silently', async () => {
    const admin = adminClient(h)
    expect((await admin.getBot({ id: bot.id })).bot.integrations.ops!.disabledChannels).toEqual(['group'])
    // From the outside (the integration creates the incoming message): its webhook answers the 400.
    const refused = await hook({ kind: 'message', channel: 'group', userId: 'erin', chatId: 'group-1', messageId: 'g-1', text: 'hi group' })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toMatch(/Channel "group" of integration "ops" is disabled in this bot/)
    // From the bot, into a conversation of that channel.
    const { conversations } = await botClient.listConversations({ integrationName: 'ops', channel: 'group' })
    expect(conversations).toHaveLength(1)
    expect(await failure(botClient.createMessage({ conversationId: conversations[0]!.id, userId: bot.id, type: 'text', payload: { text: 'x' }, tags: {} })))
      .toMatchObject({ code: 400, message: expect.stringMatching(/disabled in this bot \(disabledChannels\)/) })
    expect(await failure(botClient.createConversation({ integrationName: 'ops', channel: 'group', tags: { id: 'g-2' } }))).toMatchObject({ code: 400 })
    // Logged for the integration's owner and the bot's.
    const { logs } = await admin.getIntegrationLogs({ id: integrationId, timeStart: new Date(0).toISOString(), level: 'warn' })
    expect(logs.filter((l) => l.message.includes('the channel is disabled in this bot')).length).toBeGreaterThanOrEqual(2)
    expect((await allLogs(h, bot.id)).logs.some((l) => l.level === 'warn' && l.message.includes('on channel "group" of integration ops was refused'))).toBe(true)
    expect(outside.sent.some((s) => s.text === 'x' || s.chatId === 'group-1')).toBe(false)
    // The other channel still works.
    expect((await hook({ kind: 'message', channel: 'dm', userId: 'erin', chatId: 'dm-erin', messageId: 'd-1', text: 'hi dm' })).status).toBe(200)
    // Only the definition's channels can be disabled; null enables them all again.
    expect(await failure(admin.updateBot({ id: bot.id, integrations: { ops: { disabledChannels: ['sms'] } } } as never))).toMatchObject({ code: 400, message: expect.stringMatching(/no channel "sms"/) })
    await admin.updateBot({ id: bot.id, integrations: { ops: { disabledChannels: null } } } as never)
    expect((await admin.getBot({ id: bot.id })).bot.integrations.ops!.disabledChannels).toEqual([])
    expect((await hook({ kind: 'message', channel: 'group', userId: 'erin', chatId: 'group-1', messageId: 'g-1', text: 'hi group' })).status).toBe(200)
    await admin.updateBot({ id: bot.id, integrations: { ops: { disabledChannels: ['group'] } } } as never)
  })

  it('secrets: the integration process gets the definition\'s secret values (SECRET_<NAME>); the Admin API shows names only', async () => {
    expect(await botClient.callAction({ type: 'ops:secret', input: {} })).toMatchObject({ output: { value: SECRET_VALUE } })
    const admin = adminClient(h)
    const { integration } = await admin.getIntegration({ id: integrationId })
    expect(integration.secrets).toEqual(['API_KEY'])
    expect(JSON.stringify(integration)).not.toContain(SECRET_VALUE)
    // updateIntegration sets a new value (the process reads it at its next start), null removes it.
    await admin.updateIntegration({ id: integrationId, secrets: { API_KEY: 'rotated-value' } } as never)
    await program.stop()
    await program.start()
    expect(await botClient.callAction({ type: 'ops:secret', input: {} })).toMatchObject({ output: { value: 'rotated-value' } })
    await admin.updateIntegration({ id: integrationId, secrets: { API_KEY: null } } as never)
    await program.stop()
    await program.start()
    expect(await botClient.callAction({ type: 'ops:secret', input: {} })).toMatchObject({ output: { value: '(not set)' } })
    expect((await admin.getIntegration({ id: integrationId })).integration.secrets).toEqual(['API_KEY'])
  })
})
