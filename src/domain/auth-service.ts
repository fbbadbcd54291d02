import { errors } from '../lib/errors.js'
import { hashSecret } from '../lib/crypto.js'
import type { AccountRow, BotRow, Store, WorkspaceRow } from '../store/store.js'
import { CONSOLE_COOKIE, CONSOLE_CSRF_HEADER, readCookie } from './console-service.js'
import { assertCan, isRole, type Permission, type Role } from './permissions.js'

/** Who is calling the Admin or Files API. */
export type Principal =
  /** `session`: signed in through the console (its public id, and the PAT it was made from). */
  | { kind: 'account'; account: AccountRow; tokenId: string; session?: { id: string; accessTokenId: string | null } }
  | { kind: 'bot'; botId: string; keyId: string }
  /** An integration API key (`iak_…`): the Runtime API only, for bots that have that integration installed. */
  | { kind: 'integration'; definitionId: string; keyId: string }

const MAX_TOKEN_LENGTH = 512

/**
 * Bearer tokens: personal access tokens (`pat_…`, an account) and bot API keys (`bak_…`, one bot).
 * Both are random 256-bit secrets stored as SHA-256 digests and looked up by digest.
 * The spec's rules: missing or invalid credentials → 401; valid but not allowed → 403.
 */
export class AuthService {
  constructor(private readonly store: Store) {}

  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (!authorization) throw errors.unauthorized('The Authorization header is required: "Bearer <token>"')
    const match = /^Bearer ([^\s]+)$/i.exec(authorization)
    const token = match?.[1]
    if (!token || token.length > MAX_TOKEN_LENGTH) throw errors.unauthorized('Invalid access token')
    const hash = hashSecret(token)
    if (token.startsWith('iak_')) {
      const key = await this.store.integrations.findApiKeyByHash(hash)
      if (key) return { kind: 'integration', definitionId: key.definitionId, keyId: key.id }
    } else if (token.startsWith('bak_')) {
      const key = await this.store.findBotApiKeyByHash(hash)
      if (key) return { kind: 'bot', botId: key.botId, keyId: key.id }
    } else {
      const pat = await this.store.findAccessTokenByHash(hash)
      const account = pat && (await this.store.getAccount(pat.accountId))
      if (pat && account) return { kind: 'account', account, tokenId: pat.id }
    }
    throw errors.unauthorized('Invalid access token')
  }

  /**
   * The Admin API's caller: a Bearer token, or (no Authorization header) the console's session cookie, accepted
   * only together with the `x-parley-console: 1` header that a cross-site form or link cannot send.
   */
  async authenticateAdmin(headers: Record<string, string | string[] | undefined>, now = Date.now()): Promise<Principal> {
    const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined
    if (!authorization && headers[CONSOLE_CSRF_HEADER] === '1') {
      const sessionId = readCookie(typeof headers.cookie === 'string' ? headers.cookie : undefined, CONSOLE_COOKIE)
      const session = sessionId && sessionId.length <= 128 ? await this.store.consoleSessions.find('session', hashSecret(sessionId), now) : undefined
      const account = session && (await this.store.getAccount(session.accountId))
      if (!session || !account) throw errors.unauthorized('No console session, or it expired or was ended: sign in again')
      return { kind: 'account', account, tokenId: 'console-session', session: { id: session.id, accessTokenId: session.accessTokenId } }
    }
    return this.authenticate(authorization)
  }

  /** The personal access token behind an account's request: its Bearer PAT, or the PAT its console session was made from. */
  accessTokenOf(principal: Principal): string | null {
    if (principal.kind !== 'account') return null
    return principal.session ? principal.session.accessTokenId : principal.tokenId
  }

  requireAccount(principal: Principal): AccountRow {
    if (principal.kind !== 'account') throw errors.forbidden('Bot and integration API keys may only be used with the Files, Runtime and Tables APIs (integration keys: the Runtime API)')
    return principal.account
  }

  /** A bot API key on a route it may call for its own bot (getBot): the bot's workspace, as a viewer. */
  async ownBotRole(principal: Extract<Principal, { kind: 'bot' }>): Promise<{ workspace: WorkspaceRow; role: Role }> {
    const bot = await this.store.getBot(principal.botId)
    const workspace = bot && (await this.store.getWorkspace(bot.workspaceId))
    if (!workspace) throw errors.unauthorized('The bot of this API key no longer exists')
    return { workspace, role: 'viewer' }
  }

  /** The caller's role in a workspace: 401 for a missing or unknown workspace id, 403 for a non-member. */
  async workspaceRole(principal: Principal, workspaceId: string | undefined): Promise<{ workspace: WorkspaceRow; role: Role }> {
    if (!workspaceId) throw errors.unauthorized('The x-workspace-id header is required')
    const workspace = workspaceId.length <= 200 ? await this.store.getWorkspace(workspaceId) : undefined
    if (!workspace) throw errors.unauthorized('Invalid x-workspace-id: no such workspace')
    const account = this.requireAccount(principal)
    const member = await this.store.getMember(workspace.id, account.id)
    if (!member || !isRole(member.role)) throw errors.forbidden('You are not a member of this workspace')
    return { workspace, role: member.role }
  }

  /**
   * Access to one bot (Files API): its own bot API key, or an account whose role in the bot's
   * workspace grants `permission`.
   */
  async botAccess(principal: Principal, botId: string | undefined, permission: Permission): Promise<BotRow> {
    if (!botId) throw errors.unauthorized('The x-bot-id header is required')
    const bot = await this.findBot(botId)
    if (!bot) throw errors.unauthorized('Invalid x-bot-id: no such bot')
    return this.allowed(principal, bot, permission)
  }

  /**
   * A second bot of the same workspace as `from` (copyFile's x-destination-bot-id; absent means `from`):
   * 404 when that workspace has no such bot, then the rules of botAccess (403 for another bot's API key
   * or a role without `permission`).
   */
  async sameWorkspaceBot(principal: Principal, from: BotRow, botId: string | undefined, permission: Permission): Promise<BotRow> {
    if (botId === undefined || botId === from.id) return from
    const bot = await this.findBot(botId)
    if (!bot || bot.workspaceId !== from.workspaceId) throw errors.notFound('Bot', botId)
    return this.allowed(principal, bot, permission)
  }

  private async findBot(botId: string): Promise<BotRow | undefined> {
    return botId.length <= 200 ? this.store.getBot(botId) : undefined
  }

  private async allowed(principal: Principal, bot: BotRow, permission: Permission): Promise<BotRow> {
    if (principal.kind === 'integration') throw errors.forbidden('Integration API keys may only be used with the Runtime API')
    if (principal.kind === 'bot') {
      if (principal.botId !== bot.id) throw errors.forbidden('This bot API key belongs to another bot')
      return bot
    }
    const member = await this.store.getMember(bot.workspaceId, principal.account.id)
    if (!member || !isRole(member.role)) throw errors.forbidden('You are not a member of this bot\'s workspace')
    assertCan(member.role, permission)
    return bot
  }
}
