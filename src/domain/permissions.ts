import { errors } from '../lib/errors.js'

/**
 * Workspace roles, lowest to highest, as in Botpress (`billing` sees the workspace and its
 * members only). The table below is the single place where a role is mapped to what it may do;
 * the README reproduces it.
 */
export const ROLES = ['billing', 'viewer', 'developer', 'manager', 'administrator', 'owner'] as const
export type Role = (typeof ROLES)[number]

export const PERMISSIONS = {
  'workspace.read': 'billing',
  'members.read': 'billing',
  'bots.read': 'viewer',
  'files.read': 'viewer',
  'runtime.read': 'viewer',
  'tables.read': 'viewer',
  'bots.write': 'developer',
  'files.write': 'developer',
  'runtime.write': 'developer',
  'tables.write': 'developer',
  'bots.keys': 'developer',
  'bots.delete': 'manager',
  'members.write': 'administrator',
  'workspace.update': 'administrator',
  'workspace.delete': 'owner',
} as const satisfies Record<string, Role>

export type Permission = keyof typeof PERMISSIONS

export const rank = (role: Role) => ROLES.indexOf(role)

export function can(role: Role, permission: Permission): boolean {
  return rank(role) >= rank(PERMISSIONS[permission])
}

export function assertCan(role: Role, permission: Permission): void {
  if (!can(role, permission)) {
    throw errors.forbidden(`Your role "${role}" does not allow ${permission} (requires ${PERMISSIONS[permission]} or above)`)
  }
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}
