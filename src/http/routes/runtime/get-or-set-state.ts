import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { JsonObjectSchema } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'
import { CachedStateResponse, StateExpiry, StateParams, stateInstallation } from './states-common.js'

export default function getOrSetState(app: App): void {
  app.post('/states/:type/:id/:name/get-or-set', {
    config: { permission: 'runtime.write', installation: stateInstallation },
    schema: runtimeSchema('getOrSetState', 'The state if it is set (and not expired), otherwise sets it to the payload',
      { params: StateParams, body: Type.Object({ payload: JsonObjectSchema, expiry: Type.Optional(StateExpiry) }) }, { 200: CachedStateResponse }),
  }, async (request) => {
    const { type, id, name } = request.params
    const state = await app.services.runtimeStates.getOrSetState(request.runtimeBot, type, id, name, request.body.payload as JsonObject, request.body.expiry)
    return { state, meta: { cached: false } }
  })
}
