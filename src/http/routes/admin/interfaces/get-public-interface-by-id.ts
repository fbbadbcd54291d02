import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams, PackageSchema } from '../packages-common.js'

export default function getPublicInterfaceById(app: App): void {
  app.get('/hub/interfaces/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPublicInterfaceById', 'A public (or unlisted) interface of any workspace of this instance', { params: IdParams }, { 200: Type.Object({ interface: PackageSchema }) }),
  }, async (request) => ({ interface: packageView(await app.services.packages.hubGetById('interface', request.params.id)) }))
}
