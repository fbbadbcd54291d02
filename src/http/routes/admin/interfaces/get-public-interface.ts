import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { NameVersionParams, PackageSchema } from '../packages-common.js'

export default function getPublicInterface(app: App): void {
  app.get('/hub/interfaces/:name/:version', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPublicInterface', 'A public (or unlisted) interface of any workspace of this instance, by name and version', { params: NameVersionParams }, { 200: Type.Object({ interface: PackageSchema }) }),
  }, async (request) => ({ interface: packageView(await app.services.packages.hubGet('interface', request.params.name, request.params.version)) }))
}
