import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { tokenView } from '../../../../domain/admin-views.js'
import { NewTokenSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object({ note: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

export default function createPersonalAccessToken(app: App): void {
  app.post('/account/pats', {
    schema: adminSchema('createPersonalAccessToken', 'Create a token for the calling account; its value is shown once', { body: Body },
      { 201: Type.Object({ pat: NewTokenSchema }) }, { workspaceScoped: false }),
  }, async (request, reply) => {
    const token = await app.services.workspaces.createAccessToken(request.account.id, request.body.note)
    return reply.code(201).send({ pat: { ...tokenView(token), value: token.value } })
  })
}
