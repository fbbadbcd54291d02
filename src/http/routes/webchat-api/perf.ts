import { Type } from 'typebox'
import type { App } from '../../types.js'
import { Empty, webchatParams, webchatSchema } from './common.js'

/** The webchat's performance beacon (`POST /p`): accepted and dropped (Parley keeps its own request log and metrics). */
export default function perf(app: App): void {
  app.post('/p', {
    schema: webchatSchema('perf', 'The webchat\'s performance metrics: accepted, not kept',
      { params: webchatParams(), body: Type.Object({ duration: Type.Optional(Type.Number()), event: Type.Optional(Type.String({ maxLength: 200 })), properties: Type.Optional(Type.Unknown()) }) },
      { 200: Empty }, { authenticated: false }),
  }, async () => ({}))
}
