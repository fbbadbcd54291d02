import { errors } from '../lib/errors.js'
import { hashSecret } from '../lib/crypto.js'
import { randomSecret, uuidv7 } from '../lib/ids.js'
import { randomBytes } from 'node:crypto'
import { UniqueViolation, type AccessTokenRow, type AccountRow, type MemberRow, type Page, type Store, type WorkspaceRow } from '../store/store.js'
import type { BotRemoval } from './bot-removal.js'
import { assertCan, rank, type Role } from './permissions.js'

const randomSuffix = () => randomBytes(2).toString('hex')

export const ADMIN_PAGE_SIZE = { default: 20, max: 100 }

export interface WorkspaceWithStats { workspace: WorkspaceRow; ownerId: string; botCount: number; handle?: string | undefined }

/**
 * A workspace handle as Botpress documents it (updateWorkspace: pattern ^[0-9a-z][a-z0-9-_]+[0-9a-z]$, at most 64
 * characters): lowercase letters, digits, - and _, starting and ending with a letter or digit, 3 to 64 characters.
 */
export const HANDLE = /^[0-9a-z][a-z0-9_-]{1,62}[0-9a-z]$/
const HANDLE_RULE = 'a handle is 3 to 64 characters: lowercase letters, digits, - and _, starting and ending with a letter or digit'

/** Accounts, their personal access tokens, workspaces and memberships. */
export class WorkspaceService {
  constructor(
    private readonly store: Store,
    private readonly bots: Pick<BotRemoval, 'deleteBot'>,
    private readonly clock: () => number = Date.now,
  ) {}

  // ---- personal access tokens ----

  /** Issues a token: the value is returned once, only its digest is kept. */
  async createAccessToken(accountId: string, note: string): Promise<AccessTokenRow & { value: string }> {
    const value = randomSecret('pat')
    const row: AccessTokenRow = { id: uuidv7(), accountId, note, createdAt: this.clock() }
    await this.store.createAccessToken({ ...row, tokenHash: hashSecret(value) })
    return { ...row, value }
  }

  listAccessTokens(accountId: string): Promise<AccessTokenRow[]> {
    return this.store.listAccessTokens(accountId)
  }

  async revokeAccessToken(accountId: string, id: string): Promise<void> {
    if (!(await this.store.deleteAccessToken(accountId, id))) throw errors.notFound('Personal access token', id)
  }

  // ---- workspaces ----

  private async withStats(workspace: WorkspaceRow): Promise<WorkspaceWithStats> {
    const [members, botCount] = await Promise.all([this.store.listMembers(workspace.id, { limit: ADMIN_PAGE_SIZE.max }), this.store.countBots(workspace.id)])
    const owner = members.items.find((m) => m.role === 'owner')
    return { workspace, ownerId: owner?.account.id ?? '', botCount, handle: await this.store.packages.handleOf(workspace.id) }
  }

  async createWorkspace(account: AccountRow, name: string): Promise<WorkspaceWithStats> {
    const now = this.clock()
    const workspace: WorkspaceRow = { id: uuidv7(), name, createdAt: now, updatedAt: now }
    await this.store.createWorkspace(workspace)
    await this.store.addWorkspaceMember(workspace.id, account.id, 'owner', now)
    return this.withStats(workspace)
  }

  /** `handle`: only the workspace holding it, when the account is a member (the CLI's findWorkspaceByHandle). */
  async listWorkspaces(account: AccountRow, nextToken: string | undefined, pageSize: number, handle?: string): Promise<Page<WorkspaceWithStats>> {
    if (handle !== undefined) {
      const id = await this.store.packages.workspaceOfHandle(handle)
      const member = id !== undefined && await this.store.getMember(id, account.id)
      const workspace = member ? await this.store.getWorkspace(id) : undefined
      return { items: workspace ? [await this.withStats(workspace)] : [] }
    }
    const page = await this.store.listWorkspacesOf(account.id, { after: nextToken, limit: pageSize })
    return { items: await Promise.all(page.items.map((w) => this.withStats(w))), next: page.next }
  }

  /** A workspace the account belongs to, with the account's role; 404 when it does not belong. */
  async membership(account: AccountRow, workspaceId: string): Promise<{ workspace: WorkspaceRow; role: Role }> {
    const [workspace, member] = await Promise.all([this.store.getWorkspace(workspaceId), this.store.getMember(workspaceId, account.id)])
    if (!workspace || !member) throw errors.notFound('Workspace', workspaceId)
    return { workspace, role: member.role as Role }
  }

  async getWorkspace(account: AccountRow, workspaceId: string): Promise<WorkspaceWithStats> {
    const { workspace, role } = await this.membership(account, workspaceId)
    assertCan(role, 'workspace.read')
    return this.withStats(workspace)
  }

  async updateWorkspace(account: AccountRow, workspaceId: string, patch: { name?: string | undefined; handle?: string | undefined }): Promise<WorkspaceWithStats> {
    const { workspace, role } = await this.membership(account, workspaceId)
    assertCan(role, 'workspace.update')
    if (patch.handle !== undefined) await this.claimHandle(workspaceId, patch.handle)
    const updated = patch.name === undefined ? workspace : await this.store.updateWorkspace(workspaceId, patch.name, this.clock())
    return this.withStats(updated ?? workspace)
  }

  /**
   * checkHandleAvailability: available when well-formed and held by no workspace. A taken or malformed handle comes
   * with free suggestions; `usedBy` names the workspace holding it when the caller is one of its members.
   */
  async checkHandleAvailability(account: AccountRow, handle: string): Promise<{ available: boolean; suggestions: string[]; usedBy?: string }> {
    const wellFormed = HANDLE.test(handle)
    const holder = wellFormed ? await this.store.packages.workspaceOfHandle(handle) : undefined
    if (wellFormed && holder === undefined) return { available: true, suggestions: [] }
    const mine = holder !== undefined && (await this.store.getMember(holder, account.id)) !== undefined
    return { available: false, suggestions: await this.handleSuggestions(handle), ...(mine && { usedBy: holder }) }
  }

  private async handleSuggestions(handle: string): Promise<string[]> {
    const base = handle.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[-_]+|[-_]+$/g, '').slice(0, 56) || 'workspace'
    const out: string[] = []
    for (const candidate of [base, `${base}-bots`, `${base}-dev`, `${base}-${randomSuffix()}`, `${base}-${randomSuffix()}`]) {
      if (out.length < 3 && HANDLE.test(candidate) && candidate !== handle && (await this.store.packages.workspaceOfHandle(candidate)) === undefined) out.push(candidate)
    }
    return out
  }

  private async claimHandle(workspaceId: string, handle: string): Promise<void> {
    if (!HANDLE.test(handle)) throw errors.invalidPayload(`handle "${handle.slice(0, 100)}" is not valid: ${HANDLE_RULE}`)
    const current = await this.store.packages.handleOf(workspaceId)
    if (current === handle) return
    // A handle names the workspace's integrations (handle/name): it is claimed once and does not change.
    if (current !== undefined) throw errors.invalidPayload(`This workspace already has the handle "${current}"; a handle cannot be changed`)
    try {
      await this.store.packages.setHandle(workspaceId, handle, this.clock())
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Workspace handle', handle)
      throw err
    }
  }

  async deleteWorkspace(account: AccountRow, workspaceId: string): Promise<void> {
    const { role } = await this.membership(account, workspaceId)
    assertCan(role, 'workspace.delete')
    // Bot by bot, so that each bot's resources outside the database (file blobs) go too.
    for (;;) {
      const page = await this.store.listBots({ workspaceId, sortField: 'createdAt', sortDirection: 'asc' }, { limit: 100 })
      for (const bot of page.items) await this.bots.deleteBot(workspaceId, bot.id)
      if (!page.next) break
    }
    await this.store.deleteWorkspace(workspaceId)
  }

  // ---- members ----

  listMembers(workspaceId: string, nextToken: string | undefined, pageSize: number): Promise<Page<MemberRow>> {
    return this.store.listMembers(workspaceId, { after: nextToken, limit: pageSize })
  }

  async getMember(workspaceId: string, accountId: string): Promise<MemberRow> {
    const member = await this.store.getMember(workspaceId, accountId)
    if (!member) throw errors.notFound('Workspace member', accountId)
    return member
  }

  /** Only an owner may hand out or take away the owner role. */
  private assertMayAssign(callerRole: Role, role: Role): void {
    if (role === 'owner' && callerRole !== 'owner') throw errors.forbidden('Only an owner may grant the owner role')
    if (rank(role) > rank(callerRole)) throw errors.forbidden(`You may not grant a role above your own ("${callerRole}")`)
  }

  private async assertNotLastOwner(workspaceId: string, member: MemberRow): Promise<void> {
    if (member.role !== 'owner') return
    const members = await this.store.listMembers(workspaceId, { limit: ADMIN_PAGE_SIZE.max })
    if (members.items.filter((m) => m.role === 'owner').length <= 1) {
      throw errors.invalidPayload('A workspace must keep at least one owner')
    }
  }

  /**
   * Adds an account by email. Self-hosted Parley has no email invitations: when the email has no
   * account yet, the account is created and its first personal access token is returned once,
   * for the administrator to hand over.
   */
  async addMember(workspaceId: string, callerRole: Role, email: string, role: Role): Promise<{ member: MemberRow; firstToken?: AccessTokenRow & { value: string } }> {
    this.assertMayAssign(callerRole, role)
    const now = this.clock()
    let account = await this.store.getAccountByEmail(email)
    if (!account) {
      // The account, its first token and the membership in one step: a concurrent request for the
      // same email either loses here (and answers 409 below) or sees all three.
      const created = { id: uuidv7(), email, displayName: email.split('@')[0] ?? email, createdAt: now, updatedAt: now }
      const value = randomSecret('pat')
      const token: AccessTokenRow = { id: uuidv7(), accountId: created.id, note: `first token for ${email}`, createdAt: now }
      try {
        await this.store.createMemberAccount(created, { ...token, tokenHash: hashSecret(value) }, workspaceId, role)
        return { member: await this.getMember(workspaceId, created.id), firstToken: { ...token, value } }
      } catch (err) {
        if (!(err instanceof UniqueViolation)) throw err
        account = await this.store.getAccountByEmail(email)
        if (!account) throw err
      }
    }
    if (await this.store.getMember(workspaceId, account.id)) throw errors.alreadyExists('Workspace member', email)
    try {
      await this.store.addWorkspaceMember(workspaceId, account.id, role, now)
    } catch (err) {
      // Added by a concurrent request between the check above and this insert.
      if (err instanceof UniqueViolation) throw errors.alreadyExists('Workspace member', email)
      throw err
    }
    return { member: await this.getMember(workspaceId, account.id) }
  }

  async updateMemberRole(workspaceId: string, callerRole: Role, accountId: string, role: Role | undefined): Promise<MemberRow> {
    const member = await this.getMember(workspaceId, accountId)
    if (role === undefined || role === member.role) return member
    this.assertMayAssign(callerRole, role)
    if (member.role === 'owner' && callerRole !== 'owner') throw errors.forbidden('Only an owner may change an owner\'s role')
    await this.assertNotLastOwner(workspaceId, member)
    const updated = (await this.store.updateMemberRole(workspaceId, accountId, role, this.clock()))!
    // A console session does not outlive the role it was signed in with (README "Console sessions").
    await this.store.consoleSessions.deleteForAccount(accountId)
    return updated
  }

  async removeMember(workspaceId: string, caller: AccountRow, callerRole: Role, accountId: string): Promise<void> {
    const member = await this.getMember(workspaceId, accountId)
    // Anyone may leave; removing someone else takes members.write, and an owner only by an owner.
    if (accountId !== caller.id) {
      assertCan(callerRole, 'members.write')
      if (member.role === 'owner' && callerRole !== 'owner') throw errors.forbidden('Only an owner may remove an owner')
    }
    await this.assertNotLastOwner(workspaceId, member)
    await this.store.removeMember(workspaceId, accountId)
    await this.store.consoleSessions.deleteForAccount(accountId)
  }
}
