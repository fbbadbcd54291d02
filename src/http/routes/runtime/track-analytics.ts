import { Type } from 'typebox'
import type { App } from '../../types.js'
import { EmptyObject } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'

export default function trackAnalytics(app: App): void {
  app.post('/analytics', {
    config: { permission: 'runtime.write', installation: {} },
    schema: runtimeSchema('trackAnalytics', 'Adds to the bot\'s counter `name` for today (UTC); also a line in the bot\'s logs',
      {
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          count: Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 }),
        }),
      }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.runtimeTelemetry.trackAnalytics(request.runtimeBot, request.body.name, request.body.count)
    return {}
  })
}
