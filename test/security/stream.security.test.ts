import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MessageView } from '../../src/domain/chat-views.js'
import {
  authMatrix, contextSecrets, createFixture, expectApiError, expectNoLeak, fid, openStream, sseFrames, startSecurityContext, waitFor,
  type ChatResponse, type SecurityContext,
} from '../helpers/chat-client.js'

describe('security: stream (GET /conversations/{id}/listen)', () => {
  let ctx: SecurityContext
  beforeAll(async () => {
    ctx = await startSecurityContext()
  })
  afterAll(async () => ctx.h.close())

  authMatrix('stream', () => ctx)

  const messageFrames = (text: string) => sseFrames(text).filter((f) => f.type === 'message_created')
  const settle = () => new Promise((r) => setTimeout(r, 100))

  async function refusedStream(conversationId: string, key: string | undefined, headers: Record<string, string> = {}): Promise<ChatResponse> {
    const stream = await openStream(ctx.chat, conversationId, key, headers)
    if (stream.status === 200) {
      stream.close()
      return { status: 200, headers: stream.headers, text: '', body: undefined }
    }
    const text = await stream.body()
    return { status: stream.status, headers: stream.headers, text, body: JSON.parse(text) as unknown }
  }

  it('opens for a participant: 200, text/event-stream, no-cache, CORS origin echoed', async () => {
    const f = await createFixture(ctx.chat, 'open')
    const stream = await openStream(ctx.chat, f.conversationId, f.memberKey, { origin: 'https://app.example' })
    try {
      expect(stream.status).toBe(200)
      expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/)
      expect(String(stream.headers['cache-control'])).toContain('no-cache')
      expect(stream.headers['access-control-allow-origin']).toBe('https://app.example')
      expect(stream.headers['access-control-allow-credentials']).toBe('true')
    } finally {
      stream.close()
    }
  })

  it("delivers the conversation's messages, identical to getMessage plus isBot", async () => {
    const f = await createFixture(ctx.chat, 'deliver')
    const stream = await openStream(ctx.chat, f.conversationId, f.memberKey)
    try {
      const sent = await ctx.chat.text(f.ownerKey, f.conversationId, 'live one')
      // The fixture's own message may come first (the replay window of a fresh stream).
      const live = () => messageFrames(stream.received()).find((f) => f.data.id === sent.id)
      await waitFor(() => live() !== undefined, 3000, 'message_created')
      const frame = live()!
      const { isBot, ...message } = frame.data
      expect(isBot).toBe(false)
      const got = await ctx.chat.request<{ message: MessageView }>('GET', `/messages/${sent.id}`, { key: f.memberKey })
      expect(message).toEqual(got.body.message)
    } finally {
      stream.close()
    }
  })

  it('never carries signals of another conversation', async () => {
    const mine = await createFixture(ctx.chat, 'mine')
    const stream = await openStream(ctx.chat, mine.conversationId, mine.ownerKey)
    try {
      const secret = `not for you ${fid('s')}`
      await ctx.chat.text(ctx.fixture.ownerKey, ctx.fixture.conversationId, secret)
      await ctx.chat.createEvent(ctx.fixture.ownerKey, ctx.fixture.conversationId, { secret })
      await ctx.other.chat.text(ctx.other.fixture.ownerKey, ctx.other.fixture.conversationId, secret)
      await ctx.chat.text(mine.ownerKey, mine.conversationId, 'marker')
      await waitFor(() => stream.received().includes('marker'), 3000, 'marker')
      expect(stream.received()).not.toContain(secret)
      expect(stream.received()).not.toContain(ctx.fixture.conversationId)
    } finally {
      stream.close()
    }
  })

  it('ends the stream of a removed participant, who receives nothing afterwards', async () => {
    const f = await createFixture(ctx.chat, 'kicked')
    const stream = await openStream(ctx.chat, f.conversationId, f.memberKey)
    try {
      await ctx.chat.request('DELETE', `/conversations/${f.conversationId}/participants/${f.memberId}`, { key: f.ownerKey, body: {} })
      await waitFor(() => stream.received().includes('participant_removed'), 3000, 'participant_removed')
      await ctx.chat.text(f.ownerKey, f.conversationId, 'secret after removal')
      await settle()
      expect(stream.received()).not.toContain('secret after removal')
      await waitFor(() => stream.ended(), 3000, 'stream end')
    } finally {
      stream.close()
    }
  })

  it('a user who deletes itself stops receiving the conversation', async () => {
    const f = await createFixture(ctx.chat, 'selfdel')
    const stream = await openStream(ctx.chat, f.conversationId, f.memberKey)
    try {
      await ctx.chat.text(f.ownerKey, f.conversationId, 'before deletion')
      await waitFor(() => stream.received().includes('before deletion'), 3000, 'first message')
      expect((await ctx.chat.request('DELETE', '/users/me', { key: f.memberKey, body: {} })).status).toBe(200)
      await ctx.chat.text(f.ownerKey, f.conversationId, 'secret after deletion')
      await settle()
      expect(stream.received()).not.toContain('secret after deletion')
    } finally {
      stream.close()
    }
  })

  it('ends every stream of a deleted conversation', async () => {
    const f = await createFixture(ctx.chat, 'delconv')
    const owner = await openStream(ctx.chat, f.conversationId, f.ownerKey)
    const member = await openStream(ctx.chat, f.conversationId, f.memberKey)
    try {
      await ctx.chat.request('DELETE', `/conversations/${f.conversationId}`, { key: f.ownerKey, body: {} })
      await waitFor(() => owner.ended() && member.ended(), 3000, 'streams to end')
    } finally {
      owner.close()
      member.close()
    }
  })

  it('a stream of a deleted-then-recreated conversation id never reaches the new conversation', async () => {
    const f = await createFixture(ctx.chat, 'recreate')
    const member = await openStream(ctx.chat, f.conversationId, f.memberKey)
    try {
      await ctx.chat.request('DELETE', `/conversations/${f.conversationId}`, { key: f.ownerKey, body: {} })
      const stranger = await ctx.chat.createUser()
      await ctx.chat.createConversation(stranger.key, f.conversationId)
      await ctx.chat.text(stranger.key, f.conversationId, 'new owner secret')
      await settle()
      expect(member.received()).not.toContain('new owner secret')
    } finally {
      member.close()
    }
  })

  it.each([['abc'], ['-1'], ['1.5'], ['1 2'], ['9'.repeat(16)]])('refuses Last-Event-ID %j with 400', async (lastEventId) => {
    const res = await refusedStream(ctx.fixture.conversationId, ctx.fixture.ownerKey, { 'last-event-id': lastEventId })
    expectApiError(res, 400)
  })

  it('replay with Last-Event-ID does not bypass access checks', async () => {
    for (const key of [ctx.outsider.key, undefined, ctx.other.key]) {
      const res = await refusedStream(ctx.fixture.conversationId, key, { 'last-event-id': '0' })
      expect([401, 403]).toContain(res.status)
      expectApiError(res, res.status)
      expectNoLeak(res, contextSecrets(ctx), `${ctx.fixture.conversationId} ${key ?? ''}`)
    }
  })

  it('answers 404 for an unknown conversation', async () => {
    expectApiError(await refusedStream(fid('nope'), ctx.fixture.ownerKey), 404, 'ResourceNotFound')
  })

  it('leaves no subscription behind: refused and closed streams release everything', async () => {
    console.log("BASELINE", ctx.h.pubsub.subscriptionCount(), ctx.h.app.services.streams.openCount)
    // Other components may hold subscriptions of their own: compare with the count before.
    const baseline = ctx.h.pubsub.subscriptionCount()
    const openStreams = () => ctx.h.app.services.streams.openCount
    expect(openStreams()).toBe(0)
    for (let i = 0; i < 20; i++) await refusedStream(ctx.fixture.conversationId, ctx.outsider.key)
    expect(ctx.h.pubsub.subscriptionCount()).toBe(baseline)
    expect(openStreams()).toBe(0)
    const f = await createFixture(ctx.chat, 'cleanup')
    const streams = await Promise.all([0, 1, 2].map(() => openStream(ctx.chat, f.conversationId, f.ownerKey)))
    await waitFor(() => ctx.h.pubsub.subscriptionCount() >= baseline + 3, 3000, 'subscriptions')
    expect(openStreams()).toBe(3)
    for (const s of streams) s.close()
    await waitFor(() => ctx.h.pubsub.subscriptionCount() === baseline && openStreams() === 0, 3000, 'subscriptions released')
  })

  it('after many streams, the victim conversation is still intact', async () => {
    const res = await ctx.chat.request<{ messages: MessageView[] }>('GET', `/conversations/${ctx.fixture.conversationId}/messages`, { key: ctx.fixture.ownerKey })
    expect(res.status).toBe(200)
    expect(res.body.messages.some((m) => m.id === ctx.fixture.messageId)).toBe(true)
  })
})
