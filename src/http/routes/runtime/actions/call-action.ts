import { Type } from 'typebox'
import type { App } from '../../../types.js'
import type { JsonObject } from '../../../../store/store.js'
import { JsonObjectSchema } from '../../../schemas/common.js'
import { runtimeSchema } from '../common.js'

export default function callAction(app: App): void {
  app.post('/actions', {
    config: { permission: 'runtime.write', installation: (r) => [{ kind: 'action', id: (r.body as { type: string }).type }] },
    schema: runtimeSchema('callAction', 'Call an action: `alias:action` goes to the bot\'s integration of that alias (an installation\'s action_triggered, or a built-in one\'s: chat:sendEvent; 404 for an alias the bot has none of); an action without alias is the bot\'s own (404 when its definition\'s actions do not declare it): POSTed to a remote bot\'s url (action_triggered), or run in the sandbox (the deployed module\'s actions)', {
      body: Type.Object({
        type: Type.String({ minLength: 1, maxLength: 200, description: 'Name of the action: `<alias>:<action>` for an integration\'s' }),
        input: JsonObjectSchema,
      }),
    }, { 200: Type.Object({ output: JsonObjectSchema, meta: Type.Object({ cached: Type.Boolean() }) }) }),
  }, async (request) => ({
    output: await app.services.runtime.callAction(request.runtimeBot, request.body.type, request.body.input as JsonObject),
    meta: { cached: false },
  }))
}
