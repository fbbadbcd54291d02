import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { SseWriter, webchatSink } from '../../../sse.js'
import { webchatParams, webchatSchema } from '../common.js'

export default function listenConversation(app: App): void {
  app.get('/conversations/:id/listen', {
    schema: webchatSchema('listenConversation', 'Server-Sent Events of a conversation: the signals of /initialize, without its init',
      { params: webchatParams({ id: Type.String() }) },
      { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } }),
  }, async (request, reply) => {
    const writer = new SseWriter(request, reply)
    await app.services.streams.follow(request.chatUser, request.params.id, undefined, webchatSink(writer, app.services.config.sseKeepAliveMs), { window: false })
  })
}
