import { Type } from 'typebox'
import type { App } from '../../types.js'
import { runtimeSchema } from './common.js'
import { StateExpiry, StateParams, StateResponse, stateInstallation } from './states-common.js'

export default function setStateExpiry(app: App): void {
  app.post('/states/:type/:id/:name/expiry', {
    config: { permission: 'runtime.write', installation: stateInstallation },
    schema: runtimeSchema('setStateExpiry', 'Sets a state\'s expiry, counted from now (null: never expires); at expiry the bot gets a state_expired event',
      { params: StateParams, body: Type.Object({ expiry: StateExpiry }) }, { 200: StateResponse }),
  }, async (request) => {
    const { type, id, name } = request.params
    return { state: await app.services.runtimeStates.setStateExpiry(request.runtimeBot, type, id, name, request.body.expiry) }
  })
}
