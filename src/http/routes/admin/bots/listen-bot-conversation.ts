import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { signalSink, SseWriter } from '../../../sse.js'

const Headers = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'Resume after this event id: missed signals are replayed' })),
})

/** The console's live transcript: the Chat API's listenConversation frames, for a member who reads the bot's conversations. */
export default function listenBotConversation(app: App): void {
  app.get('/bots/:id/conversations/:conversationId/listen', {
    config: { permission: 'conversations.read' },
    schema: adminSchema('listenBotConversation',
      'Server-Sent Events of one of the bot\'s conversations, as listenConversation sends them to a participant (message_created, event_created, …; the conversation sequence as the id; Last-Event-ID replays): the console\'s live transcript and handoff inbox',
      { params: Type.Object({ id: Type.String({ maxLength: 200 }), conversationId: Type.String({ maxLength: 200 }) }), headers: Headers },
      { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } }),
  }, async (request, reply) => {
    const target = await app.services.archive.streamTarget(request.workspace.id, request.params.id, request.params.conversationId)
    const lastEventId = request.headers['last-event-id']
    const writer = new SseWriter(request, reply)
    await app.services.streams.followAsMember(target, lastEventId === undefined ? undefined : Number(lastEventId), signalSink(writer, app.services.config.sseKeepAliveMs))
  })
}
