import { Type } from 'typebox'
import type { App } from '../../../types.js'
import type { JsonObject } from '../../../../store/store.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { runtimeSchema } from '../common.js'

export default function callAction(app: App): void {
  app.post('/actions', {
    config: { permission: 'runtime.write', installation: (r) => [{ kind: 'action', id: (r.body as { type: string }).type }] },
    schema: runtimeSchema('callAction', 'Call one of the bot\'s own actions: POSTed to a remote bot\'s url (action_triggered), or run in the sandbox (the deployed module\'s actions)', {
      body: Type.Object({
        type: Type.String({ minLength: 1, maxLength: 200, description: 'Name of the action' }),
        input: JsonObjectSchema,
      }),
    }, { 200: Type.Object({ output: JsonObjectSchema, meta: Type.Object({ cached: Type.Boolean() }) }) }),
  }, async (request) => ({
    output: await app.services.runtime.callAction(request.runtimeBot, request.body.type, request.body.input as JsonObject),
    meta: { cached: false },
  }))
}
