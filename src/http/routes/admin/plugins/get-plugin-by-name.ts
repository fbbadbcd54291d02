import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { NameVersionParams, PackageSchema } from '../packages-common.js'

export default function getPluginByName(app: App): void {
  app.get('/plugins/:name/:version', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPluginByName', 'The workspace\'s plugin of this name and version', { params: NameVersionParams }, { 200: Type.Object({ plugin: PackageSchema }) }),
  }, async (request) => ({ plugin: packageView(await app.services.packages.getByName(request.workspace.id, 'plugin', request.params.name, request.params.version)) }))
}
