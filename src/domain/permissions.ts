import { errors } from '../lib/errors.js'

/**
 * Workspace roles, as in Botpress (`billing` sees the workspace and its members only), plus `agent`
 * (Parley's human-handoff role: reads conversations and answers handoffs, nothing else). Roles are
 * not a line any more: a viewer reads bot configuration and an agent must not, an agent answers
 * handoffs and a viewer must not. Each role has its own set of permissions (below, the single place
 * where a role is mapped to what it may do; the README reproduces it).
 *
 * ROLES keeps the order used to compare roles for granting ("a role above your own"): `agent` sits
 * beside `viewer`, so whoever may grant a viewer may grant an agent.
 */
export const ROLES = ['billing', 'agent', 'viewer', 'developer', 'manager', 'administrator', 'owner'] as const
export type Role = (typeof ROLES)[number]

const BILLING = ['workspace.read', 'members.read'] as const
const VIEWER = [...BILLING, 'bots.list', 'bots.read', 'files.read', 'runtime.read', 'tables.read', 'conversations.read', 'handoffs.read'] as const
const DEVELOPER = [...VIEWER, 'bots.write', 'files.write', 'runtime.write', 'tables.write', 'bots.keys', 'handoffs.write'] as const
const MANAGER = [...DEVELOPER, 'bots.delete', 'handoffs.assign'] as const
const ADMINISTRATOR = [...MANAGER, 'members.write', 'workspace.update'] as const
const OWNER = [...ADMINISTRATOR, 'workspace.delete'] as const

export type Permission = (typeof OWNER)[number]

/**
 * What each role may do. Every role but `agent` has what the role below it has (the former linear
 * ranks, unchanged). `agent`: the workspace and its members (to see who else answers), which bots
 * the workspace has, the bots' conversations and their handoffs (read, claim, reply, note, end); no bot
 * configuration, files, tables, logs or keys.
 * - bots.list: listBots, to pick a bot in the console (an agent's listing omits each bot's `url`, the one
 *   summary field that is configuration; bots.read adds it, and getBot).
 * - conversations.read: transcripts (Admin API conversation reads; the console's conversation pages).
 * - handoffs.read / handoffs.write: list and read handoffs / start, claim for oneself, reply, note, end.
 * - handoffs.assign: claim a handoff for another member.
 * A viewer may read handoffs but not answer them.
 */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  billing: new Set(BILLING),
  agent: new Set([...BILLING, 'bots.list', 'conversations.read', 'handoffs.read', 'handoffs.write'] as const),
  viewer: new Set(VIEWER),
  developer: new Set(DEVELOPER),
  manager: new Set(MANAGER),
  administrator: new Set(ADMINISTRATOR),
  owner: new Set(OWNER),
}

/** The roles that have `permission` (for messages). */
export function rolesWith(permission: Permission): Role[] {
  return ROLES.filter((r) => ROLE_PERMISSIONS[r].has(permission))
}

export const rank = (role: Role) => ROLES.indexOf(role)

export function can(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission)
}

export function assertCan(role: Role, permission: Permission): void {
  if (!can(role, permission)) {
    throw errors.forbidden(`Your role "${role}" does not allow ${permission} (roles that do: ${rolesWith(permission).join(', ')})`)
  }
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}
