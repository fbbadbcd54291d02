import { Type } from 'typebox'
import type { App } from '../../types.js'
import { conversationView } from '../../../domain/chat-views.js'
import { webchatMessageView, webchatUserView } from '../../../domain/webchat-api-views.js'
import { SseWriter, webchatSink } from '../../sse.js'
import { webchatParams, webchatSchema } from './common.js'

const Query = Type.Object({
  conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  userId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'With x-admin-secret and no x-user-key: the user your backend names' })),
})
const Headers = Type.Object({ 'x-user-key': Type.Optional(Type.String()), 'x-admin-secret': Type.Optional(Type.String({ maxLength: 1000 })) })

/**
 * The official webchat's stream: its first frame is `init` (the conversation, its newest messages first, its
 * participants, the user with its `userKey`); a client with no key gets a new user, and one with no
 * `conversationId` a new conversation (whose start turn greets on this stream). Then the conversation's signals.
 */
export default function initialize(app: App): void {
  app.get('/initialize', {
    schema: webchatSchema('initialize', 'Server-Sent Events: `init` first, then message_created, message_updated, typing_started, typing_stopped, participant_added, participant_removed, custom',
      { params: webchatParams(), querystring: Query, headers: Headers },
      { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } }, { authenticated: false }),
  }, async (request, reply) => {
    const { conversationId, userId } = request.query
    const init = await app.services.webchatApi.initialize(request.integration, {
      key: request.headers['x-user-key'], adminSecret: request.headers['x-admin-secret'], userId, conversationId,
    })
    const frame = {
      type: 'init' as const,
      data: {
        conversation: conversationView(init.conversation),
        messages: init.messages.map(webchatMessageView),
        participants: init.participants.map((u) => webchatUserView(u)),
        user: { ...webchatUserView(init.user), userKey: init.userKey },
      },
    }
    const writer = new SseWriter(request, reply)
    // From the conversation's position when it was read: what was appended since comes after `init` (at most twice: the
    // webchat keeps one message per id).
    await app.services.streams.follow(init.user, init.conversation.id, init.conversation.lastSeq, webchatSink(writer, app.services.config.sseKeepAliveMs, frame))
  })
}
