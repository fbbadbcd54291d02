import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { NameVersionParams, PackageSchema } from '../packages-common.js'

export default function getPublicPlugin(app: App): void {
  app.get('/hub/plugins/:name/:version', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getPublicPlugin', 'A public (or unlisted) plugin of any workspace of this instance, by name and version', { params: NameVersionParams }, { 200: Type.Object({ plugin: PackageSchema }) }),
  }, async (request) => ({ plugin: packageView(await app.services.packages.hubGet('plugin', request.params.name, request.params.version)) }))
}
