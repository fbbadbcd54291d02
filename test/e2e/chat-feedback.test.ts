/**
 * Feedback on bot messages (`PUT /{webhookId}/messages/{id}/feedback`, Parley's addition to the Chat API):
 * recorded on the message, read back through the Chat API (`metadata.feedback`, with the official `@botpress/chat`
 * client) and the Runtime API (`tags.feedback`, filterable, with the official `@botpress/client`); only
 * participants, only on the bot's messages; bad input is a 400 in the Botpress error body.
 */
import * as chat from '@botpress/chat'
import type { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { createBot } from '../runtime/helpers.js'

describe('message feedback', () => {
  let h: Harness
  let bot: Client
  let user: chat.AuthenticatedClient
  let conversationId: string
  let botMessageId: string
  let userMessageId: string

  const put = (id: string, body: unknown, key = user.user.key) =>
    fetch(`${h.credentials.chat.url}/messages/${encodeURIComponent(id)}/feedback`, {
      method: 'PUT',
      headers: { 'x-user-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await runtimeClient(h)
    user = await chat.Client.connect({ apiUrl: h.credentials.chat.url })
    ;({ conversation: { id: conversationId } } = await user.createConversation({}))
    ;({ message: { id: userMessageId } } = await user.createMessage({ conversationId, payload: { type: 'text', text: 'how do I reset my password?' } }))
    const { message } = await bot.createMessage({
      conversationId, userId: h.credentials.botId, type: 'text', payload: { text: 'Click "Forgot password".' }, tags: {},
    } as never)
    botMessageId = message.id
  })
  afterAll(async () => {
    await h?.close()
  })

  it('records a thumbs down on the message: metadata.feedback in the Chat API, tags.feedback in the Runtime API', async () => {
    const res = await put(botMessageId, { value: 'negative', comment: 'did not help' })
    expect(res.status).toBe(200)
    const { message } = (await res.json()) as { message: chat.Message }
    expect(message.metadata).toMatchObject({ feedback: { value: 'negative', userId: user.user.id, comment: 'did not help' } })
    expect((message.metadata!.feedback as { at: string }).at).toMatch(/Z$/)

    const { message: viaChat } = await user.getMessage({ id: botMessageId })
    expect(viaChat).toEqual(message)
    const { messages } = await user.listMessages({ conversationId })
    expect(messages.find((m) => m.id === botMessageId)).toEqual(message)

    const { message: viaRuntime } = await bot.getMessage({ id: botMessageId })
    expect(viaRuntime.tags).toMatchObject({ feedback: 'negative' })
    const { messages: negative } = await bot.listMessages({ conversationId, tags: { feedback: 'negative' } })
    expect(negative.map((m) => m.id)).toEqual([botMessageId])
  })

  it('changes to thumbs up, and null removes it', async () => {
    expect((await put(botMessageId, { value: 'positive' })).status).toBe(200)
    expect(((await user.getMessage({ id: botMessageId })).message.metadata!.feedback as { value: string }).value).toBe('positive')
    expect((await bot.getMessage({ id: botMessageId })).message.tags.feedback).toBe('positive')
    expect((await put(botMessageId, { value: null })).status).toBe(200)
    expect((await user.getMessage({ id: botMessageId })).message.metadata).toBeUndefined()
    expect((await bot.getMessage({ id: botMessageId })).message.tags.feedback).toBeUndefined()
  })

  it('refuses feedback on a user\'s message (400), from a non-participant (403), on an unknown message (404), and bad bodies (400)', async () => {
    const expectError = async (res: Response, status: number, type: string) => {
      expect(res.status).toBe(status)
      const body = (await res.json()) as Record<string, unknown>
      expect(body).toMatchObject({ code: status, type })
      expect(typeof body.id).toBe('string')
      expect(typeof body.message).toBe('string')
    }
    await expectError(await put(userMessageId, { value: 'positive' }), 400, 'InvalidPayload')
    const stranger = await chat.Client.connect({ apiUrl: h.credentials.chat.url })
    await expectError(await put(botMessageId, { value: 'positive' }, stranger.user.key), 403, 'Forbidden')
    await expectError(await put('no-such-message', { value: 'positive' }), 404, 'ResourceNotFound')
    await expectError(await put(botMessageId, { value: 'meh' }), 400, 'InvalidPayload')
    await expectError(await put(botMessageId, {}), 400, 'InvalidPayload')
    await expectError(await put(botMessageId, { value: 'positive', comment: 'x'.repeat(1001) }), 400, 'InvalidPayload')
    await expectError(await put(botMessageId, { value: 'positive', extra: 1 }), 400, 'InvalidPayload')
    // no user key, or a forged one: 401
    const anonymous = await fetch(`${h.credentials.chat.url}/messages/${encodeURIComponent(botMessageId)}/feedback`, {
      method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ value: 'positive' }),
    })
    await expectError(anonymous, 401, 'Unauthorized')
    await expectError(await put(botMessageId, { value: 'positive' }, 'not-a-key'), 401, 'Unauthorized')
    // another bot's chat: the message is not there (404), whoever asks
    const other = await createBot(h)
    const otherUser = await chat.Client.connect({ apiUrl: other.url })
    const elsewhere = await fetch(`${other.url}/messages/${encodeURIComponent(botMessageId)}/feedback`, {
      method: 'PUT', headers: { 'x-user-key': otherUser.user.key, 'content-type': 'application/json' }, body: JSON.stringify({ value: 'positive' }),
    })
    await expectError(elsewhere, 404, 'ResourceNotFound')
    // None of those changed anything.
    expect((await user.getMessage({ id: botMessageId })).message.metadata).toBeUndefined()
  })
})
