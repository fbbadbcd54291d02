import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { NameVersionParams, PackageSchema } from '../packages-common.js'

export default function getInterfaceByName(app: App): void {
  app.get('/interfaces/:name/:version', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getInterfaceByName', 'The workspace\'s interface of this name and version', { params: NameVersionParams }, { 200: Type.Object({ interface: PackageSchema }) }),
  }, async (request) => ({ interface: packageView(await app.services.packages.getByName(request.workspace.id, 'interface', request.params.name, request.params.version)) }))
}
