import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { JsonObjectSchema } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { StateExpiry, StateParams, StateResponse, stateInstallation } from './states-common.js'

export default function patchState(app: App): void {
  app.patch('/states/:type/:id/:name', {
    config: { permission: 'runtime.write', installation: stateInstallation },
    schema: runtimeSchema('patchState', 'Merges the payload\'s top-level keys into a set state (404 when unset); the result must satisfy the schema',
      { params: StateParams, body: Type.Object({ payload: JsonObjectSchema, expiry: Type.Optional(StateExpiry) }) }, { 200: StateResponse }),
  }, async (request) => {
    const { type, id, name } = request.params
    return { state: await app.services.runtimeStates.patchState(request.runtimeBot, type, id, name, request.body.payload as JsonObject, request.body.expiry) }
  })
}
