import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'

export default function checkHandleAvailability(app: App): void {
  // A static path: find-my-way matches it before PUT /workspaces/:id (updateWorkspace).
  app.put('/workspaces/handle-availability', {
    schema: adminSchema('checkHandleAvailability', 'Whether a workspace handle is well-formed and free (`bp deploy` asks before claiming one with updateWorkspace)',
      { body: Type.Object({ handle: Type.String({ maxLength: 200 }) }, { additionalProperties: false }) },
      { 200: Type.Object({ available: Type.Boolean(), suggestions: Type.Array(Type.String()), usedBy: Type.Optional(Type.String()) }) }, { workspaceScoped: false }),
  }, async (request) => app.services.workspaces.checkHandleAvailability(request.account, request.body.handle))
}
