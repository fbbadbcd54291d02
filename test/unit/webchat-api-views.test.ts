/**
 * The webchat API's views (src/domain/webchat-api-views.ts), row by row: what Botpress's webchat 4.5.2 reads from a
 * message, a user, a bot's event and a reply being streamed. The same shapes are checked over HTTP and in Chromium
 * (test/api/webchat-api.test.ts, test/browser/botpress-webchat.test.ts); here each rule alone.
 */
import { describe, expect, it } from 'vitest'
import { WebchatDrafts, webchatMessageView, webchatSignal, webchatStatusSignal, webchatUserView } from '../../src/domain/webchat-api-views.js'
import type { EventRow, MessageRow, SignalRecord, UserRow } from '../../src/store/store.js'

const message = (over: Partial<MessageRow>): MessageRow => ({
  id: 'm1', integrationId: 'i', conversationId: 'c', seq: 1, userId: 'u', isBot: false, payload: { type: 'text', text: 'hi' },
  metadata: null, botSkip: false, createdAt: 0, ...over,
})
const botEvent = (payload: EventRow['payload']): SignalRecord =>
  ({ kind: 'event_created', seq: 2, event: { id: 'e', integrationId: 'i', conversationId: 'c', seq: 2, userId: 'bot', isBot: true, payload, botSkip: false, createdAt: 0 } }) as SignalRecord

describe('webchat API views', () => {
  it('a message: feedback out of the metadata, a button\'s answer as clicked, a streamed reply with its draft\'s clientMessageId, bloc items wrapped', () => {
    expect(webchatMessageView(message({ isBot: true, metadata: { feedback: { value: 'negative', userId: 'u', at: 'x', comment: 'no' }, k: 1 } })))
      .toMatchObject({ metadata: { k: 1 }, feedback: { value: 'negative', comment: 'no' } })
    expect(webchatMessageView(message({ payload: { type: 'text', text: 'show image' }, metadata: { webchat: { label: 'Show image' } } })).payload)
      .toEqual({ type: 'text', text: 'Show image', value: 'show image' })
    // A bot's message never reads as a button's answer.
    expect(webchatMessageView(message({ isBot: true, payload: { type: 'text', text: 'a' }, metadata: { webchat: { label: 'b' } } })).payload).toEqual({ type: 'text', text: 'a' })
    expect(webchatMessageView(message({ isBot: true, metadata: { streamId: 's1' } })).metadata).toEqual({ streamId: 's1', clientMessageId: 's1' })
    expect(webchatMessageView(message({ isBot: true, payload: { type: 'bloc', items: [{ type: 'text', text: 'x' }] } })).payload)
      .toEqual({ type: 'bloc', items: [{ type: 'text', payload: { text: 'x' } }] })
  })

  it('a user: userData read back as given (JSON or text), attributes only when there are some', () => {
    const user: UserRow = { integrationId: 'i', id: 'u', name: null, pictureUrl: null, profile: '{"plan":"pro"}', isBot: false, createdAt: 0, updatedAt: 0 }
    expect(webchatUserView(user, { a: 'b' })).toMatchObject({ data: { plan: 'pro' }, attributes: { a: 'b' } })
    expect(webchatUserView({ ...user, profile: 'plain text' }).data).toBe('plain text')
    expect(webchatUserView({ ...user, profile: '' }, {})).not.toHaveProperty('data')
    expect(webchatUserView({ ...user, profile: null }, {})).not.toHaveProperty('attributes')
  })

  it('a bot\'s event: webchat_visibility and webchat_config when it says so, else custom; a user\'s own event is not sent back', () => {
    expect(webchatSignal(botEvent({ type: 'webchat_visibility', visibility: 'show' }))).toEqual({ type: 'webchat_visibility', data: { visibility: 'show' } })
    expect(webchatSignal(botEvent({ type: 'webchat_visibility', visibility: 'explode' }))).toEqual({ type: 'custom', data: { event: { type: 'webchat_visibility', visibility: 'explode' } } })
    expect(webchatSignal(botEvent({ type: 'webchat_config', config: { color: '#000' } }))).toEqual({ type: 'webchat_config', data: { config: { color: '#000' } } })
    expect(webchatSignal(botEvent({ kind: 'promo' }))).toEqual({ type: 'custom', data: { event: { kind: 'promo' } } })
    const own = botEvent({ kind: 'x' }) as SignalRecord & { event: { isBot: boolean } }
    own.event.isBot = false
    expect(webchatSignal(own)).toBeUndefined()
  })

  it('a user\'s message is marked processing once the bot has it; not a bot\'s, nor one its beforeIncoming hook stopped', () => {
    const created = (over: Partial<MessageRow>) => ({ kind: 'message_created', seq: 1, message: message({ metadata: { clientMessageId: 'c' }, ...over }) }) as SignalRecord
    expect(webchatStatusSignal(created({}))).toMatchObject({ type: 'message_status_changed', data: { newStatus: 'processing', message: { metadata: { clientMessageId: 'c' } } } })
    expect(webchatStatusSignal(created({ isBot: true }))).toBeUndefined()
    expect(webchatStatusSignal(created({ botSkip: true }))).toBeUndefined()
  })

  it('a reply being streamed: one draft whose text grows; an abort leaves it; at most 8 drafts per listener', () => {
    const drafts = new WebchatDrafts()
    const delta = (streamId: string, delta: string, sequence: number) =>
      drafts.apply({ type: 'message_stream_delta', streamId, conversationId: 'c', userId: 'bot', createdAt: 'now', sequence, delta })
    expect((delta('s', 'Hel', 0)!.data as { payload: unknown }).payload).toEqual({ type: 'text', text: 'Hel' })
    expect(delta('s', 'lo', 1)).toMatchObject({ type: 'message_updated', data: { id: 's', payload: { type: 'text', text: 'Hello' }, metadata: { clientMessageId: 's' } } })
    expect(drafts.apply({ type: 'message_stream_abort', streamId: 's', conversationId: 'c' })).toBeUndefined()
    for (let i = 0; i < 20; i++) delta(`x${i}`, 'a', 0)
    // The oldest were dropped: a piece of x0 starts a new draft.
    expect((delta('x0', 'b', 1)!.data as { payload: { text: string } }).payload.text).toBe('b')
    expect((delta('x19', 'b', 1)!.data as { payload: { text: string } }).payload.text).toBe('ab')
  })
})
