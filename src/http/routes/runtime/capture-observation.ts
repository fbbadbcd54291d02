import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { EmptyObject, JsonObjectSchema } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'

const Ref = Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))

export default function captureObservation(app: App): void {
  app.post('/observations', {
    config: { permission: 'runtime.write', installation: { body: { messageId: 'message', eventId: 'event', conversationId: 'conversation', userId: 'user' } } },
    schema: runtimeSchema('captureObservation', 'Stores an observation (the newest PARLEY_RUNTIME_OBSERVATIONS_KEPT per bot) and writes it to the bot\'s logs',
      {
        body: Type.Object({
          id: Ref, name: Type.String({ minLength: 1, maxLength: 200 }), data: JsonObjectSchema,
          messageId: Ref, eventId: Ref, conversationId: Ref, userId: Ref, errorId: Ref, traceId: Ref,
        }),
      }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.runtimeTelemetry.captureObservation(request.runtimeBot, { ...request.body, data: request.body.data as JsonObject })
    return {}
  })
}
