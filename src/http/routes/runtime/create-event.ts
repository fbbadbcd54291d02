import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { runtimeSchema } from './common.js'
import { CreateEventBody, EventResponse } from './events-common.js'

export default function createEvent(app: App): void {
  app.post('/events', {
    config: { permission: 'runtime.write', installation: { body: { conversationId: 'conversation', userId: 'user', workflowId: 'workflow', messageId: 'message' } } },
    schema: runtimeSchema('createEvent', 'Creates an event for the bot: into its conversation\'s log (as a Chat API custom event) or as a bot-level event; `schedule` delivers it later',
      { body: CreateEventBody }, { 200: EventResponse }),
  }, async (request, reply) => {
    const event = await app.services.runtimeEvents.create(request.runtimeBot, { ...request.body, payload: request.body.payload as JsonObject })
    return reply.send({ event })
  })
}
