import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { memberView } from '../../../../domain/admin-views.js'
import type { Role } from '../../../../domain/permissions.js'
import { MemberSchema, RoleSchema } from '../../../schemas/admin.js'
import { adminSchema } from '../common.js'

const Body = Type.Object({ role: Type.Optional(RoleSchema) }, { additionalProperties: false })

export default function updateWorkspaceMember(app: App): void {
  app.put('/workspace-members/:id', {
    config: { permission: 'members.write' },
    schema: adminSchema('updateWorkspaceMember', 'Change a member\'s role', { params: Type.Object({ id: Type.String() }), body: Body }, { 200: MemberSchema }),
  }, async (request) => {
    const member = await app.services.workspaces.updateMemberRole(request.workspace.id, request.role, request.params.id, request.body.role as Role | undefined)
    return memberView(member)
  })
}
