import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { consoleSignInUrl } from '../../../../console/urls.js'

export default function createConsoleSignInLink(app: App): void {
  app.post('/account/console-links', {
    schema: adminSchema('createConsoleSignInLink', 'A one-time link that signs the calling account in to the console (`parley console`); it works once, within PARLEY_CONSOLE_LINK_MINUTES, and its session ends with the personal access token of this request (or of its console session)', {},
      { 201: Type.Object({ url: Type.String(), expiresAt: Type.String() }) }, { workspaceScoped: false }),
  }, async (request, reply) => {
    const link = await app.services.console.createSignInLink(request.account, app.services.auth.accessTokenOf(request.principal))
    return reply.code(201).send({ url: consoleSignInUrl(app.services.config.publicUrl, link.secret), expiresAt: new Date(link.expiresAt).toISOString() })
  })
}
