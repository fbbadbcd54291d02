import type { Kysely, Selectable } from 'kysely'
import type { ConsoleSecretKind, ConsoleSessionRow, ConsoleSessionStore } from '../console-session-store.js'

/** The table of migrations/<dialect>/0014_console_sessions.sql and 0020_console_sessions_token.sql. */
interface ConsoleTables {
  console_sessions: { token_hash: string; kind: string; account_id: string; created_at: number; expires_at: number; id: string; access_token_id: string | null }
}

const toRow = (r: Selectable<ConsoleTables['console_sessions']>): ConsoleSessionRow => ({
  tokenHash: r.token_hash,
  kind: r.kind as ConsoleSecretKind,
  accountId: r.account_id,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  id: r.id,
  accessTokenId: r.access_token_id,
})

export class KyselyConsoleSessionStore implements ConsoleSessionStore {
  private readonly db: Kysely<ConsoleTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<ConsoleTables>
  }

  async create(row: ConsoleSessionRow): Promise<void> {
    await this.db.insertInto('console_sessions').values({
      token_hash: row.tokenHash, kind: row.kind, account_id: row.accountId, created_at: row.createdAt, expires_at: row.expiresAt,
      id: row.id, access_token_id: row.accessTokenId,
    }).execute()
  }

  async find(kind: ConsoleSecretKind, tokenHash: string, now: number): Promise<ConsoleSessionRow | undefined> {
    const r = await this.db.selectFrom('console_sessions').selectAll()
      .where('token_hash', '=', tokenHash).where('kind', '=', kind).where('expires_at', '>', now).executeTakeFirst()
    return r && toRow(r)
  }

  async consume(kind: ConsoleSecretKind, tokenHash: string, now: number): Promise<ConsoleSessionRow | undefined> {
    // One statement: of two concurrent deletes of the same row only one returns it (both engines).
    const r = await this.db.deleteFrom('console_sessions')
      .where('token_hash', '=', tokenHash).where('kind', '=', kind)
      .returningAll().executeTakeFirst()
    if (!r) return undefined
    const row = toRow(r)
    return row.expiresAt > now ? row : undefined
  }

  async delete(tokenHash: string): Promise<boolean> {
    const r = await this.db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async listSessions(accountId: string, now: number): Promise<ConsoleSessionRow[]> {
    const rows = await this.db.selectFrom('console_sessions').selectAll()
      .where('account_id', '=', accountId).where('kind', '=', 'session').where('expires_at', '>', now)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
    return rows.map(toRow)
  }

  async deleteSession(accountId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('console_sessions').where('account_id', '=', accountId).where('kind', '=', 'session').where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  async deleteForAccount(accountId: string): Promise<number> {
    await this.db.deleteFrom('console_sessions').where('account_id', '=', accountId).where('kind', '=', 'link').execute()
    const r = await this.db.deleteFrom('console_sessions').where('account_id', '=', accountId).executeTakeFirst()
    return Number(r.numDeletedRows)
  }

  async deleteExpired(now: number): Promise<number> {
    const r = await this.db.deleteFrom('console_sessions').where('expires_at', '<=', now).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
