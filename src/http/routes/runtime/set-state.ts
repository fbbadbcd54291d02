import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { JsonObjectSchema } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { StateExpiry, StateParams, StateResponse, stateInstallation } from './states-common.js'

export default function setState(app: App): void {
  app.post('/states/:type/:id/:name', {
    config: { permission: 'runtime.write', installation: stateInstallation },
    schema: runtimeSchema('setState', 'Replaces a declared state (the payload must satisfy its schema); a null payload deletes it',
      {
        params: StateParams,
        body: Type.Object({ payload: Type.Union([JsonObjectSchema, Type.Null()]), expiry: Type.Optional(StateExpiry) }),
      }, { 200: StateResponse }),
  }, async (request) => {
    const { type, id, name } = request.params
    return { state: await app.services.runtimeStates.setState(request.runtimeBot, type, id, name, request.body.payload as JsonObject | null, request.body.expiry) }
  })
}
