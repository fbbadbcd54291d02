/**
 * Console sign-in state (migrations/<dialect>/0014_console_sessions.sql): browser sessions and one-time
 * sign-in links, each a random secret stored only as its SHA-256 digest, bound to an account, with an expiry.
 */
export type ConsoleSecretKind = 'session' | 'link'

export interface ConsoleSessionRow {
  tokenHash: string
  kind: ConsoleSecretKind
  accountId: string
  createdAt: number
  expiresAt: number
}

export interface ConsoleSessionStore {
  create(row: ConsoleSessionRow): Promise<void>
  /** The live (not expired at `now`) row of that kind and digest. */
  find(kind: ConsoleSecretKind, tokenHash: string, now: number): Promise<ConsoleSessionRow | undefined>
  /** Deletes the row and answers it when it was live: of concurrent callers, at most one gets it (one-time links). */
  consume(kind: ConsoleSecretKind, tokenHash: string, now: number): Promise<ConsoleSessionRow | undefined>
  /** Sign-out: true when a row was deleted. */
  delete(tokenHash: string): Promise<boolean>
  /** Deletes rows expired before `now`; answers how many. */
  deleteExpired(now: number): Promise<number>
}
