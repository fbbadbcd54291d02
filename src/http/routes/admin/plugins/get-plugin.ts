import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams, PackageSchema } from '../packages-common.js'

export default function getPlugin(app: App): void {
  app.get('/plugins/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPlugin', 'One of the workspace\'s plugins', { params: IdParams }, { 200: Type.Object({ plugin: PackageSchema }) }),
  }, async (request) => ({ plugin: packageView(await app.services.packages.get(request.workspace.id, 'plugin', request.params.id)) }))
}
