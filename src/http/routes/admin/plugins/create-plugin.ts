import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { packageView } from '../../../../domain/admin-views.js'
import { adminSchema } from '../common.js'
import { PackageBody, PackageSchema } from '../packages-common.js'

export default function createPlugin(app: App): void {
  app.post('/plugins', {
    config: { permission: 'bots.write' },
    schema: adminSchema('createPlugin', 'Define a plugin (`bp deploy`): private to the workspace, or public (found by every workspace\'s hub routes) and its bundles `code: { node, browser }` (kept, not run here)',
      { body: PackageBody }, { 201: Type.Object({ plugin: PackageSchema }) }),
  }, async (request, reply) => reply.code(201).send({ plugin: packageView(await app.services.packages.create(request.workspace.id, 'plugin', request.body)) }))
}
