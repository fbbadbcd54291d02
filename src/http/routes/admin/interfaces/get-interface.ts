import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams, PackageSchema } from '../packages-common.js'

export default function getInterface(app: App): void {
  app.get('/interfaces/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getInterface', 'One of the workspace\'s interfaces', { params: IdParams }, { 200: Type.Object({ interface: PackageSchema }) }),
  }, async (request) => ({ interface: packageView(await app.services.packages.get(request.workspace.id, 'interface', request.params.id)) }))
}
