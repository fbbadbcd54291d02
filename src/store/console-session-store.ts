/**
 * Console sign-in state (migrations/<dialect>/0014_console_sessions.sql, 0020_console_sessions_token.sql): browser
 * sessions and one-time sign-in links, each a random secret stored only as its SHA-256 digest, bound to an account
 * and to the personal access token it was made from (deleted with that token), with an expiry.
 */
export type ConsoleSecretKind = 'session' | 'link'

export interface ConsoleSessionRow {
  tokenHash: string
  kind: ConsoleSecretKind
  accountId: string
  createdAt: number
  expiresAt: number
  /** The public id (listConsoleSessions, revokeConsoleSession): never the secret nor its digest. */
  id: string
  /** The personal access token it was made from, directly or through a sign-in link minted with it (null: none). */
  accessTokenId: string | null
}

export interface ConsoleSessionStore {
  create(row: ConsoleSessionRow): Promise<void>
  /** The live (not expired at `now`) row of that kind and digest. */
  find(kind: ConsoleSecretKind, tokenHash: string, now: number): Promise<ConsoleSessionRow | undefined>
  /** Deletes the row and answers it when it was live: of concurrent callers, at most one gets it (one-time links). */
  consume(kind: ConsoleSecretKind, tokenHash: string, now: number): Promise<ConsoleSessionRow | undefined>
  /** Sign-out: true when a row was deleted. */
  delete(tokenHash: string): Promise<boolean>
  /** The account's live sessions (kind `session`), newest first. */
  listSessions(accountId: string, now: number): Promise<ConsoleSessionRow[]>
  /** Deletes one of the account's sessions by its public id: true when it was there. */
  deleteSession(accountId: string, id: string): Promise<boolean>
  /** Deletes every session and sign-in link of the account; answers how many sessions. */
  deleteForAccount(accountId: string): Promise<number>
  /** Deletes rows expired before `now`; answers how many. */
  deleteExpired(now: number): Promise<number>
}
