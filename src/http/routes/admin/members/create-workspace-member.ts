import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { memberView, tokenView } from '../../../../domain/admin-views.js'
import type { Role } from '../../../../domain/permissions.js'
import { MemberSchema, RoleSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object(
  { email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 320, description: 'Any address of the form local@domain (local domains such as owner@localhost included)' }), role: RoleSchema, sendEmail: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
)

export default function createWorkspaceMember(app: App): void {
  app.post('/workspace-members', {
    config: { permission: 'members.write' },
    schema: adminSchema('createWorkspaceMember',
      'Add an account by email. If no account has this email yet it is created, and the response carries its first token in `pat` (shown once)',
      { body: Body }, { 201: MemberSchema }),
  }, async (request, reply) => {
    const { member, firstToken } = await app.services.workspaces.addMember(request.workspace.id, request.role, request.body.email.toLowerCase(), request.body.role as Role)
    return reply.code(201).send({ ...memberView(member), ...(firstToken && { pat: { ...tokenView(firstToken), value: firstToken.value } }) })
  })
}
