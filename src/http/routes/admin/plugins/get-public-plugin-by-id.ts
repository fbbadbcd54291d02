import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { IdParams, PackageSchema } from '../packages-common.js'

export default function getPublicPluginById(app: App): void {
  app.get('/hub/plugins/:id', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPublicPluginById', 'A public (or unlisted) plugin of any workspace of this instance', { params: IdParams }, { 200: Type.Object({ plugin: PackageSchema }) }),
  }, async (request) => ({ plugin: packageView(await app.services.packages.hubGetById('plugin', request.params.id)) }))
}
