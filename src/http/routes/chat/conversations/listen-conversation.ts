import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { signalSink, SseWriter } from '../../../sse.js'
import { chatParams, chatSchema } from '../common.js'

const Headers = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'Resume after this event id: missed signals are replayed' })),
})

const Query = Type.Object({
  replay: Type.Optional(Type.Union([Type.Literal('window'), Type.Literal('none')], {
    description: 'Parley: without Last-Event-ID, `window` (the default) also sends the signals of the last PARLEY_CHAT_LISTEN_REPLAY_MS before the listener connected; `none` sends only what comes next (for a client that opens the stream, then reads the history)',
  })),
})

export default function listenConversation(app: App): void {
  app.get('/conversations/:id/listen', {
    schema: chatSchema('listenConversation',
      'Server-Sent Events: unnamed data frames {type, data} for message_created, event_created, participant_added, participant_removed, message_deleted; each carries the conversation sequence as its id. Keep-alive frames {"type":"ping","data":{}} also say when the bot is typing: {"type":"ping","data":{"typing":true|false}}',
      { params: chatParams({ id: Type.String() }), headers: Headers, querystring: Query },
      { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } }),
  }, async (request, reply) => {
    const lastEventId = request.headers['last-event-id']
    const writer = new SseWriter(request, reply)
    // Access is checked before open() sends the status line, so refusals are ordinary 403/404 responses.
    await app.services.streams.follow(request.chatUser, request.params.id, lastEventId === undefined ? undefined : Number(lastEventId),
      signalSink(writer, app.services.config.sseKeepAliveMs), { window: request.query.replay !== 'none' })
  })
}
