import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams, PackagePatch, PackageSchema } from '../packages-common.js'

export default function updateInterface(app: App): void {
  app.put('/interfaces/:id', {
    config: { permission: 'bots.write' },
    schema: adminSchema('updateInterface', 'Change an interface of the workspace: parts given replace the stored ones (an entry set to null is removed)',
      { params: IdParams, body: PackagePatch }, { 200: Type.Object({ interface: PackageSchema }) }),
  }, async (request) => ({ interface: packageView(await app.services.packages.update(request.workspace.id, 'interface', request.params.id, request.body)) }))
}
