import type { Kysely, Transaction } from 'kysely'

/**
 * PostgreSQL aborts one transaction of a lock cycle as a deadlock victim (40P01), or one that lost a
 * serialization race (40001). Its statements left nothing behind, so running the transaction again
 * is safe and is what PostgreSQL's manual asks of applications. SQLite never raises these codes.
 */
export const TRANSACTION_ATTEMPTS = 5

export function isTransientConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code
  return code === '40P01' || code === '40001'
}

/**
 * Runs `work` in a transaction, again (up to TRANSACTION_ATTEMPTS runs) when PostgreSQL aborted it as
 * a deadlock victim or serialization failure. `work` must only touch the database through `trx`:
 * anything else it did would be done twice.
 */
export async function inRetriedTransaction<D, T>(db: Kysely<D>, work: (trx: Transaction<D>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work)
    } catch (err) {
      if (attempt >= TRANSACTION_ATTEMPTS || !isTransientConflict(err)) throw err
    }
  }
}
