import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { PackageBody, PackageSchema } from '../packages-common.js'

export default function createInterface(app: App): void {
  app.post('/interfaces', {
    config: { permission: 'bots.write' },
    schema: adminSchema('createInterface', 'Define an interface (`bp deploy`): private to the workspace, or public (found by every workspace\'s hub routes)',
      { body: PackageBody }, { 201: Type.Object({ interface: PackageSchema }) }),
  }, async (request, reply) => reply.code(201).send({ interface: packageView(await app.services.packages.create(request.workspace.id, 'interface', request.body)) }))
}
