import type { App } from '../../types.js'
import { runtimeSchema } from './common.js'
import { CachedStateResponse, StateParams, stateInstallation } from './states-common.js'

export default function getState(app: App): void {
  app.get('/states/:type/:id/:name', {
    config: { permission: 'runtime.read', installation: stateInstallation },
    schema: runtimeSchema('getState', 'A declared state of a conversation, user, bot, integration or workflow (404 when unset or expired)',
      { params: StateParams }, { 200: CachedStateResponse }),
  }, async (request) => {
    const { type, id, name } = request.params
    return { state: await app.services.runtimeStates.getState(request.runtimeBot, type, id, name), meta: { cached: false } }
  })
}
