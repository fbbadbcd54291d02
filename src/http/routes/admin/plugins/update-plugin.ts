import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams, PackagePatch, PackageSchema } from '../packages-common.js'

export default function updatePlugin(app: App): void {
  app.put('/plugins/:id', {
    config: { permission: 'bots.write' },
    schema: adminSchema('updatePlugin', 'Change a plugin of the workspace: parts given replace the stored ones (an entry set to null is removed)',
      { params: IdParams, body: PackagePatch }, { 200: Type.Object({ plugin: PackageSchema }) }),
  }, async (request) => ({ plugin: packageView(await app.services.packages.update(request.workspace.id, 'plugin', request.params.id, request.body)) }))
}
