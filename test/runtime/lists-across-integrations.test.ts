/**
 * Runtime lists without `integrationName` answer across all of a bot's integrations, as Botpress Cloud does (#25 item 6):
 * a bot with the built-in chat (an end user on @botpress/chat) and an unchanged @botpress/sdk integration
 * (test/fixtures/sdk-integrations/outside-chat.mjs, a child process writing its conversation with its own key), read with
 * @botpress/client as the bot: listConversations, listUsers, listMessages and listTagValues over both, paged
 * across them, filtered; `integrationName` narrows to one; the integration's own key still sees its installation only
 * (#24); and the console's transcript export holds both channels' messages.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import definition from '../fixtures/sdk-integrations/outside-chat.definition.mjs'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient as adminHttp } from '../helpers/admin-client.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import type { SdkBot } from '../helpers/sdk-bot.js'
import { hostSdkIntegration, startOutsideChat, type OutsideChat } from '../helpers/sdk-integration.js'
import { STREAM_CONFIG, Talk, type TestBot } from './helpers.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 20_000, attempts: 2, backoffMs: 100, maxBackoffMs: 200 }

/** Bot code that answers nothing: the test sees exactly the messages it makes. */
const CODE = 'export const hooks = {}\n'

describe('Runtime lists across all of a bot\'s integrations', () => {
  let h: Harness
  let outside: OutsideChat
  let program: SdkBot
  let bot: TestBot
  let integrationId: string
  let integrationKey: string
  let webhookUrl: string
  let client: Client
  let talk: Talk
  /** The outside channel's conversation, user and messages (written by the integration's process). */
  let outsideIds: { conversationId: string; userId: string; messageIds: string[] }

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE } })
    outside = await startOutsideChat()
    ;({ integrationId, integrationKey, program, bot, webhookUrl } = await hostSdkIntegration(h, {
      definition, script: '../sdk-integrations/outside-chat.mjs', alias: 'outside', code: CODE,
      installation: { configuration: { serviceUrl: outside.url, verifyToken: 'let-me-in' } },
    }))
    client = await runtimeClient(h, bot.id)
    // The chat channel: an end user's conversation and message on the Chat API.
    talk = await Talk.open(bot)
    await talk.user.createMessage({ conversationId: talk.conversationId, payload: { type: 'text', text: 'from chat' } })
    // The outside channel: two messages delivered to the installation's webhook.
    const messageIds: string[] = []
    let conversationId = ''
    let userId = ''
    for (const [i, text] of ['from outside 1', 'from outside 2'].entries()) {
      const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'olga', userName: 'Olga', chatId: 'room-1', messageId: `o-${i}`, text }) })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { conversationId: string; userId: string; messageId: string }
      ;({ conversationId, userId } = body)
      messageIds.push(body.messageId)
    }
    outsideIds = { conversationId, userId, messageIds }
    // The integration does not make its user a participant (getOrCreateMessage does not): the bot does.
    await client.addParticipant({ id: conversationId, userId })
  })
  afterAll(async () => {
    await talk?.close()
    await program?.stop()
    await outside?.close()
    await h?.close()
  })

  it('listConversations: both channels without integrationName, one with it; filters and sort hold across them', async () => {
    const ids = async (q: Parameters<Client['listConversations']>[0] = {}) => (await client.listConversations(q)).conversations.map((c) => `${c.integration}:${c.id}`)
    const chat = `chat:${talk.conversationId}`
    const other = `outside:${outsideIds.conversationId}`
    expect((await ids()).sort()).toEqual([chat, other].sort())
    expect(await ids({ sortField: 'createdAt', sortDirection: 'asc' })).toEqual([chat, other])
    expect(await ids({ sortDirection: 'desc' })).toEqual([other, chat])
    expect(await ids({ integrationName: 'outside' })).toEqual([other])
    expect(await ids({ integrationName: 'chat' })).toEqual([chat])
    expect(await ids({ tags: { id: 'room-1' } })).toEqual([other])
    expect(await ids({ participantIds: [outsideIds.userId] })).toEqual([other])
    // Both channels are named `channel` (the chat's and the outside definition's): the filter holds in each integration.
    expect((await ids({ channel: 'channel' })).sort()).toEqual([chat, other].sort())
    expect(await ids({ channel: 'elsewhere' })).toEqual([])
    expect(await ids({ minMessageCount: 2 })).toEqual([other])
    // Pages of one: every conversation once, whichever integration it is in.
    const paged: string[] = []
    let nextToken: string | undefined
    do {
      const page = await client.listConversations({ pageSize: 1, ...(nextToken && { nextToken }) })
      paged.push(...page.conversations.map((c) => `${c.integration}:${c.id}`))
      nextToken = page.meta.nextToken
    } while (nextToken)
    expect(paged).toEqual([other, chat])
  })

  it('listUsers, listMessages, listTagValues and listParticipants: across both channels, paged', async () => {
    const users = (await client.listUsers({})).users.map((u) => u.id)
    expect(users.sort()).toEqual([talk.user.user.id, outsideIds.userId].sort())
    expect((await client.listUsers({ tags: { id: 'olga' } })).users.map((u) => u.id)).toEqual([outsideIds.userId])
    expect((await client.listUsers({ conversationId: outsideIds.conversationId })).users.map((u) => u.id)).toEqual([outsideIds.userId])
    const firstUser = await client.listUsers({ pageSize: 1, sortDirection: 'asc' })
    expect(firstUser.users.map((u) => u.id)).toEqual([talk.user.user.id])
    expect((await client.listUsers({ pageSize: 1, sortDirection: 'asc', nextToken: firstUser.meta.nextToken })).users.map((u) => u.id)).toEqual([outsideIds.userId])

    const texts: string[] = []
    let nextToken: string | undefined
    do {
      const page = await client.listMessages({ pageSize: 2, ...(nextToken && { nextToken }) })
      texts.push(...page.messages.map((m) => (m.payload as { text: string }).text))
      nextToken = page.meta.nextToken
    } while (nextToken)
    expect(texts).toEqual(['from outside 2', 'from outside 1', 'from chat'])
    expect((await client.listMessages({ conversationId: outsideIds.conversationId })).messages.map((m) => m.id)).toEqual([...outsideIds.messageIds].reverse())
    expect((await client.listMessages({ tags: { id: 'o-1' } })).messages.map((m) => m.id)).toEqual([outsideIds.messageIds[1]])

    expect((await client.listTagValues({ key: 'id', type: 'conversation' })).tags).toEqual([{ value: 'room-1' }])
    expect((await client.listTagValues({ key: 'id', type: 'user' })).tags).toEqual([{ value: 'olga' }])
    expect((await client.listParticipants({ id: outsideIds.conversationId })).participants.map((p) => p.id)).toEqual([outsideIds.userId])
  })

  it('an integration\'s own key still lists its installation only; integrationName of another answers 404', async () => {
    const asIntegration = new Client({ apiUrl: h.baseUrl, token: integrationKey, botId: bot.id, integrationId })
    expect((await asIntegration.listConversations({})).conversations.map((c) => c.id)).toEqual([outsideIds.conversationId])
    expect((await asIntegration.listUsers({})).users.map((u) => u.id)).toEqual([outsideIds.userId])
    expect((await asIntegration.listMessages({})).messages.map((m) => m.id).sort()).toEqual([...outsideIds.messageIds].sort())
    expect((await asIntegration.listTagValues({ key: 'id', type: 'conversation' })).tags).toEqual([{ value: 'room-1' }])
    await expect(asIntegration.listConversations({ integrationName: 'chat' })).rejects.toMatchObject({ code: 404 })
  })

  it('the console\'s export and transcript hold both channels\' conversations', async () => {
    const admin = adminHttp(h)
    const exported = await admin('GET', `/bots/${bot.id}/export?format=json`)
    expect(exported.status, exported.text).toBe(200)
    const rows = exported.text.trim().split('\n').map((line) => JSON.parse(line) as { conversationId: string; text: string })
    expect(rows.map((r) => r.text).sort()).toEqual(['from chat', 'from outside 1', 'from outside 2'])
    const listed = await admin('GET', `/bots/${bot.id}/conversations`)
    expect(listed.status, listed.text).toBe(200)
    expect((listed.body.conversations as { id: string }[]).map((c) => c.id).sort()).toEqual([talk.conversationId, outsideIds.conversationId].sort())
    const transcript = await admin('GET', `/bots/${bot.id}/conversations/${outsideIds.conversationId}/transcript`)
    expect(transcript.status, transcript.text).toBe(200)
    expect((transcript.body.messages as { payload: { text: string } }[]).map((m) => m.payload.text)).toEqual(['from outside 1', 'from outside 2'])
    expect((transcript.body.users as { id: string; name?: string }[]).find((u) => u.id === outsideIds.userId)?.name).toBe('Olga')
  })
})
