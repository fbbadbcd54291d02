import { randomBytes } from 'node:crypto'
import { errors } from '../lib/errors.js'
import { hashSecret } from '../lib/crypto.js'
import { uuidv7 } from '../lib/ids.js'
import type { ConsoleSessionRow } from '../store/console-session-store.js'
import type { AccountRow, Store } from '../store/store.js'

/** The session cookie of the console (opaque: a random id; the server keeps only its digest). */
export const CONSOLE_COOKIE = 'parley_console'
/** The header every console API call sends: a cross-site form or image cannot, so a cookie alone authenticates nothing. */
export const CONSOLE_CSRF_HEADER = 'x-parley-console'

const MAX_SECRET_LENGTH = 128

/** `name=value` pairs of a Cookie header (the first of each name). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8192) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** A console session as listConsoleSessions shows it (never its secret). */
export interface ConsoleSessionView {
  id: string
  createdAt: string
  expiresAt: string
  /** The personal access token it was made from (directly, or through a sign-in link minted with it). */
  personalAccessTokenId: string | null
  /** It is the session of the request that lists it. */
  current: boolean
}

/**
 * Console sign-in: a personal access token or a one-time link (`parley console`) becomes a browser session, an
 * opaque random id in an HttpOnly cookie whose SHA-256 digest is stored with an expiry (store.consoleSessions).
 * The PAT itself never reaches the browser's storage.
 *
 * A session lives no longer than what made it: it records the PAT it was signed in with (a sign-in link records
 * the PAT of the request that minted it, and passes it on to its session), and the store deletes it with that
 * PAT. Removing a member from a workspace or changing their role ends all of that account's sessions and
 * links (WorkspaceService). An account lists its sessions and revokes one, or all ("sign out everywhere").
 */
export class ConsoleService {
  constructor(private readonly store: Store, private readonly ttl: { sessionTtlMs: number; linkTtlMs: number }) {}

  /** A new session for the owner of a personal access token (401 when it is not one). */
  async signInWithToken(token: unknown, now = Date.now()): Promise<{ sessionId: string; expiresAt: number }> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 512 || !token.startsWith('pat_')) throw errors.unauthorized('Invalid access token')
    const pat = await this.store.findAccessTokenByHash(hashSecret(token))
    const account = pat && (await this.store.getAccount(pat.accountId))
    if (!account) throw errors.unauthorized('Invalid access token')
    return this.newSession(account.id, pat.id, now)
  }

  /**
   * A one-time sign-in link's secret for an account (valid linkTtlMs, usable once), tied to `accessTokenId`, the
   * PAT of the request that asks for it (or of its console session): the link and its session end with that PAT.
   */
  async createSignInLink(account: AccountRow, accessTokenId: string | null, now = Date.now()): Promise<{ secret: string; expiresAt: number }> {
    const secret = `csl_${randomBytes(32).toString('base64url')}`
    const expiresAt = now + this.ttl.linkTtlMs
    await this.store.consoleSessions.create({ tokenHash: hashSecret(secret), kind: 'link', accountId: account.id, createdAt: now, expiresAt, id: uuidv7(), accessTokenId })
    return { secret, expiresAt }
  }

  /** Uses a sign-in link (once): a new session, or 401 when it is unknown, used or expired. */
  async redeemSignInLink(secret: unknown, now = Date.now()): Promise<{ sessionId: string; expiresAt: number }> {
    if (typeof secret !== 'string' || secret.length > MAX_SECRET_LENGTH) throw errors.unauthorized('Invalid or used sign-in link')
    const link = await this.store.consoleSessions.consume('link', hashSecret(secret), now)
    if (!link) throw errors.unauthorized('Invalid or used sign-in link')
    return this.newSession(link.accountId, link.accessTokenId, now)
  }

  /** The live session of a cookie's session id and its account, or undefined. */
  async session(sessionId: string | undefined, now = Date.now()): Promise<{ session: ConsoleSessionRow; account: AccountRow } | undefined> {
    if (!sessionId || sessionId.length > MAX_SECRET_LENGTH) return undefined
    const session = await this.store.consoleSessions.find('session', hashSecret(sessionId), now)
    const account = session && (await this.store.getAccount(session.accountId))
    return account && { session: session!, account }
  }

  /** The account of a live session id, or undefined. */
  async sessionAccount(sessionId: string | undefined, now = Date.now()): Promise<AccountRow | undefined> {
    return (await this.session(sessionId, now))?.account
  }

  /** The account's live sessions, newest first; `currentId`: the public id of the caller's own session. */
  async listSessions(accountId: string, currentId: string | undefined, now = Date.now()): Promise<ConsoleSessionView[]> {
    return (await this.store.consoleSessions.listSessions(accountId, now)).map((s) => ({
      id: s.id, createdAt: new Date(s.createdAt).toISOString(), expiresAt: new Date(s.expiresAt).toISOString(),
      personalAccessTokenId: s.accessTokenId, current: s.id === currentId,
    }))
  }

  /** Ends one of the account's sessions (404 for an unknown id or another account's). */
  async revokeSession(accountId: string, id: string): Promise<void> {
    if (id.length > 100 || !(await this.store.consoleSessions.deleteSession(accountId, id))) throw errors.notFound('Console session', id)
  }

  /** Sign out everywhere: every session and sign-in link of the account; how many sessions ended. */
  revokeAll(accountId: string): Promise<number> {
    return this.store.consoleSessions.deleteForAccount(accountId)
  }

  async signOut(sessionId: string | undefined): Promise<void> {
    if (sessionId && sessionId.length <= MAX_SECRET_LENGTH) await this.store.consoleSessions.delete(hashSecret(sessionId))
  }

  private async newSession(accountId: string, accessTokenId: string | null, now: number): Promise<{ sessionId: string; expiresAt: number }> {
    const sessionId = randomBytes(32).toString('base64url')
    const expiresAt = now + this.ttl.sessionTtlMs
    await this.store.consoleSessions.create({ tokenHash: hashSecret(sessionId), kind: 'session', accountId, createdAt: now, expiresAt, id: uuidv7(), accessTokenId })
    // Expired rows go when new ones come: no timer needed.
    await this.store.consoleSessions.deleteExpired(now)
    return { sessionId, expiresAt }
  }
}
