import type { App } from '../../types.js'
import { EmptyBody, EmptyObject } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { EventIdParams } from './events-common.js'

export default function cancelScheduledEvent(app: App): void {
  app.delete('/events/scheduled/:id', {
    config: { permission: 'runtime.write', installation: { params: { id: 'event' } } },
    schema: runtimeSchema('cancelScheduledEvent', 'Cancels a scheduled event that is not due yet (400 once delivered or canceled)',
      { params: EventIdParams, body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.runtimeEvents.cancelScheduled(request.runtimeBot, request.params.id)
    return {}
  })
}
