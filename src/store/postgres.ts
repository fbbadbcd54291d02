import pg from 'pg'
import { CompiledQuery, Kysely, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely'
import type { Database } from './kysely/schema.js'
import { KyselyStore } from './kysely/kysely-store.js'
import { isTransientConflict, TRANSACTION_ATTEMPTS } from './kysely/conflicts.js'
import { eventColumns, eventRow, messageColumns, messageRow } from './kysely/rows.js'
import type { Appended, EventRow, MessageRow, NewEvent, NewMessage } from './store.js'
import { migrateToLatest } from './migrator.js'
import { checkNotifyMessage, pgChannelName } from '../pubsub/pg-notify.js'

export interface PostgresOptions extends PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq-style query parameters such as sslmode work too). */
  url: string
  /** Connections in this instance's pool (default 10). */
  poolSize?: number | undefined
  /** How long a query waits for a free pool connection (or a new connection) before failing (default 10 s). */
  connectionTimeoutMs?: number | undefined
  /** Errors of idle pooled connections (the server went away); the pool drops the connection either way. */
  onPoolError?: ((err: Error) => void) | undefined
}

/**
 * Type parsers of this pool only (the global `pg.types` stay untouched): BIGINT (int8, e.g. our
 * millisecond timestamps and sequence numbers, and `count(*)`) and NUMERIC become JS numbers, as
 * they are on SQLite. Every value Parley stores is a safe integer, so nothing is rounded.
 */
export function parleyTypeParsers(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides()
  const toNumber = (value: string) => Number(value)
  types.setTypeParser(pg.types.builtins.INT8, toNumber)
  types.setTypeParser(pg.types.builtins.NUMERIC, toNumber)
  return types
}

/** Distinct statements a pool prepares by name; beyond them, statements are parsed and planned on each run. */
const MAX_PREPARED_STATEMENTS = 200

/**
 * Kysely's pool, with statements run as named prepared statements: parsed and analysed once per
 * connection instead of on every run, and planned once PostgreSQL settles on a generic plan (half
 * of PostgreSQL's CPU per createMessage was parse, analysis and planning). Only statements with
 * parameters (the others may hold several commands), and only those whose text names every result
 * column: a prepared `SELECT *` or `RETURNING *` would fail ("cached plan must not change result
 * type") after another instance's migration added a column. Names are per pool, one per text.
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>()
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text)
    if (name === undefined && names.size < MAX_PREPARED_STATEMENTS && !text.includes('*')) {
      name = `parley_${names.size + 1}`
      names.set(text, name)
    }
    return name
  }
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  // Kysely calls query(sql, parameters) only: the cursor overload needs a `cursor` in the dialect config.
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((text: string, values: unknown[]) => {
      const name = values.length > 0 ? nameOf(text) : undefined
      return name ? client.query({ name, text, values }) : client.query(text, values)
    }) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  })
  return {
    async connect() {
      const client = await pool.connect()
      let w = wrapped.get(client)
      if (!w) wrapped.set(client, (w = wrap(client)))
      return w
    },
    end: () => pool.end(),
  }
}

/** The URL without its password, for logs and the startup banner (in its own module: main.ts prints it without loading pg). */
export { redactDatabaseUrl } from './database-url.js'

/** An append's columns (but seq and created_at). */
type AppendColumns = Record<string, string | number | null>
type AppendedSeq = { seq: number; at: number }

interface PendingAppend {
  kind: 'message' | 'event'
  append: NewMessage | NewEvent
  columns: AppendColumns
  resolve: (appended: AppendedSeq | undefined) => void
  reject: (err: unknown) => void
}

/**
 * Append statements running at once per store; appends arriving meanwhile wait and go out together.
 * One measured best (bench/ANALYSIS.md §9): two or more in flight made smaller batches, and more
 * PostgreSQL CPU per row, for less throughput. The price: a statement waiting on a conversation's
 * row lock (that conversation being deleted) holds the next appends back until it is granted.
 */
const APPEND_BATCHES = 1
const MAX_APPEND_BATCH = 100
/**
 * Runs of one append that PostgreSQL aborted as a deadlock victim (40P01) or serialization failure
 * (40001) before it fails. Two instances' append statements on the same conversations do deadlock
 * now and then despite the ordered locking (observed under the stream-resume stress, PostgreSQL 15:
 * one waits for the other's transaction while holding the row's tuple lock the other then asks
 * for). The statement is atomic, so the victim left nothing behind (no row, no seq, no
 * notification) and running it again is safe; without this, createMessage answered 500.
 */
const APPEND_ATTEMPTS = TRANSACTION_ATTEMPTS
const retryable = (err: unknown, append: NewMessage | NewEvent) =>
  // 23505: an `ifAbsent` append's id was inserted by a concurrent statement meanwhile; run again, it finds the row.
  isTransientConflict(err) || ((err as { code?: unknown } | undefined)?.code === '23505' && append.ifAbsent === true)

/**
 * Appends (messages and events, each of another conversation) in one statement, over the rows of
 * `input`. `locked` keeps the appends whose conversation exists and whose author may post (the
 * participant check, once per row) and locks those conversations' rows in one order, so that two
 * batches, here or on another instance, never wait for each other in a cycle (FOR NO KEY UPDATE:
 * the lock the UPDATE takes anyway). `next` takes each conversation's next seq and timestamp under
 * that lock and carries the append's columns on, so the INSERTs read `next` alone. `notified` sends
 * the notifications ($12–$14, by ordinal of their append) of the appends that happened, so they go
 * out exactly when the rows commit; PostgreSQL folds identical notifications of one transaction into
 * one, which is harmless for pokes. Answers the appended rows' ordinals: an append that did not
 * happen (conversation gone, author not a participant, or an `ifAbsent` append ($15) whose id is already in its
 * integration) is missing from the answer.
 *
 * The shape matters: the first version checked participants and joined `input` inside the UPDATE
 * and the INSERTs, which PostgreSQL ran as nested loops over the whole batch, at about 1.8× this
 * statement's CPU per row (bench/ANALYSIS.md §9, measured with bench/tools/pg-append).
 */
const GROUP_APPEND = `WITH input AS (
  SELECT i.kind, i.id, i.integration_id, i.conversation_id, i.user_id, i.is_bot, i.payload, i.metadata, i.bot_skip, i.now, i.require_participant, i.if_absent, i.ord
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::boolean[], $15::boolean[])
    WITH ORDINALITY AS i(kind, id, integration_id, conversation_id, user_id, is_bot, payload, metadata, bot_skip, now, require_participant, if_absent, ord)
), locked AS (
  SELECT i.ord, i.kind, i.id, i.integration_id, i.conversation_id, i.user_id, i.is_bot, i.payload, i.metadata, i.bot_skip, i.now
  FROM input i JOIN conversations c ON c.integration_id = i.integration_id AND c.id = i.conversation_id
  WHERE (NOT i.require_participant OR EXISTS (
    SELECT 1 FROM participants p WHERE p.integration_id = i.integration_id AND p.conversation_id = i.conversation_id AND p.user_id = i.user_id))
  AND NOT (i.if_absent AND (
    (i.kind = 'message' AND EXISTS (SELECT 1 FROM messages m WHERE m.id = i.id AND m.integration_id = i.integration_id))
    OR (i.kind = 'event' AND EXISTS (SELECT 1 FROM events e WHERE e.id = i.id AND e.integration_id = i.integration_id))))
  ORDER BY c.integration_id, c.id FOR NO KEY UPDATE OF c
), next AS (
  UPDATE conversations c
  SET last_seq = c.last_seq + 1, last_at = CASE WHEN c.last_at >= l.now THEN c.last_at + 1 ELSE l.now END, updated_at = l.now
  FROM locked l
  WHERE c.integration_id = l.integration_id AND c.id = l.conversation_id
  RETURNING l.ord, l.kind, l.id, l.integration_id, l.conversation_id, l.user_id, l.is_bot, l.payload, l.metadata, l.bot_skip, c.last_seq, c.last_at
), new_messages AS (
  INSERT INTO messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at)
  SELECT n.id, n.integration_id, n.conversation_id, n.last_seq, n.user_id, n.is_bot, n.payload, n.metadata, n.bot_skip, n.last_at
  FROM next n WHERE n.kind = 'message'
), new_events AS (
  INSERT INTO events (id, integration_id, conversation_id, seq, user_id, is_bot, payload, bot_skip, created_at)
  SELECT n.id, n.integration_id, n.conversation_id, n.last_seq, n.user_id, n.is_bot, n.payload, n.bot_skip, n.last_at
  FROM next n WHERE n.kind = 'event'
), notified AS (
  SELECT count(pg_notify(x.channel, x.message)) AS sent
  FROM unnest($12::bigint[], $13::text[], $14::text[]) AS x(ord, channel, message) JOIN next n ON n.ord = x.ord
)
SELECT n.ord, n.last_seq, n.last_at FROM next n, notified`

export interface PostgresStoreOptions {
  /**
   * Send appends' notifications in the append's own statement (pg_notify). Only when the pub/sub is
   * a PostgresPubSub listening on the same database: another pub/sub would never hear them.
   */
  sendAppendNotifications?: boolean | undefined
}

/**
 * The KyselyStore on PostgreSQL, plus what only a database shared by several processes needs:
 * `withLock` holds a session-level advisory lock (keyed by `hashtext(name)`) on one reserved pool
 * connection while `fn` runs on the others; the lock is released, or dies with the connection if
 * the process does, so a crashed instance never leaves it held. createMessage's append is its own.
 */
export class PostgresStore extends KyselyStore {
  override readonly sendsAppendNotifications: boolean

  constructor(db: Kysely<Database>, options: PostgresStoreOptions = {}) {
    super(db, 'postgres')
    this.sendsAppendNotifications = options.sendAppendNotifications === true
  }

  /**
   * createMessage's and createEvent's append as ONE statement (GROUP_APPEND): one round trip
   * instead of four (BEGIN, UPDATE, INSERT, COMMIT), atomic without an explicit transaction.
   *
   * Group commit, as on SQLite: appends arriving while the APPEND_BATCHES statements are running
   * go out together in the next one (one round trip and one commit for many). Every caller is
   * answered after the commit that holds its row. A batch never holds two appends of one
   * conversation; when it fails, its appends run again one by one, so that one failing append does
   * not fail the others.
   */
  override async appendMessage(m: NewMessage): Promise<Appended<MessageRow> | undefined> {
    const r = await this.enqueueAppend('message', m, messageColumns(m))
    if (r) return messageRow(m, r.seq, r.at)
    // Not appended: the conversation is gone, the author may not post or (ifAbsent) the id is taken: then its row.
    const stored = m.ifAbsent ? await this.getMessage(m.integrationId, m.id) : undefined
    return stored && { ...stored, existing: true }
  }

  override async appendEvent(e: NewEvent): Promise<Appended<EventRow> | undefined> {
    const r = await this.enqueueAppend('event', e, eventColumns(e))
    if (r) return eventRow(e, r.seq, r.at)
    const stored = e.ifAbsent ? await this.getEvent(e.integrationId, e.id) : undefined
    return stored && { ...stored, existing: true }
  }

  private appendQueue: PendingAppend[] = []
  private appendBatches = 0

  private enqueueAppend(kind: PendingAppend['kind'], append: NewMessage | NewEvent, columns: AppendColumns): Promise<AppendedSeq | undefined> {
    // Checked here: one notification NOTIFY refuses would fail the whole batch's statement.
    if (this.sendsAppendNotifications) for (const n of append.notify ?? []) checkNotifyMessage(n.message)
    return new Promise((resolve, reject) => {
      this.appendQueue.push({ kind, append, columns, resolve, reject })
      this.sendAppends()
    })
  }

  private sendAppends(): void {
    while (this.appendBatches < APPEND_BATCHES && this.appendQueue.length > 0) {
      const conversations = new Set<string>()
      let n = 0
      for (const item of this.appendQueue) {
        const conversation = `${item.append.integrationId}\u0000${item.append.conversationId}`
        if (n === MAX_APPEND_BATCH || conversations.has(conversation)) break
        conversations.add(conversation)
        n++
      }
      const batch = this.appendQueue.splice(0, n)
      this.appendBatches++
      void this.runAppends(batch).finally(() => {
        this.appendBatches--
        this.sendAppends()
      })
    }
  }

  private async runAppends(batch: PendingAppend[], attempt = 1): Promise<void> {
    let rows: { ord: number; last_seq: number; last_at: number }[]
    try {
      rows = (await this.db.executeQuery<{ ord: number; last_seq: number; last_at: number }>(this.groupAppend(batch))).rows
    } catch (err) {
      if (batch.length === 1) {
        if (attempt < APPEND_ATTEMPTS && retryable(err, batch[0]!.append)) return this.runAppends(batch, attempt + 1)
        return batch[0]!.reject(err)
      }
      // One of them failed (or the batch lost a deadlock): each on its own.
      await Promise.all(batch.map((item) => this.runAppends([item])))
      return
    }
    const appended = new Map(rows.map((r) => [Number(r.ord), { seq: Number(r.last_seq), at: Number(r.last_at) }]))
    batch.forEach((item, i) => item.resolve(appended.get(i + 1)))
  }

  private groupAppend(batch: PendingAppend[]): CompiledQuery {
    const column = (f: (item: PendingAppend) => unknown) => batch.map(f)
    const notifyOrd: number[] = []
    const notifyChannel: string[] = []
    const notifyMessage: string[] = []
    if (this.sendsAppendNotifications) {
      batch.forEach((item, i) => {
        for (const n of item.append.notify ?? []) {
          notifyOrd.push(i + 1)
          notifyChannel.push(pgChannelName(n.channel))
          notifyMessage.push(n.message)
        }
      })
    }
    return CompiledQuery.raw(GROUP_APPEND, [
      column((b) => b.kind), column((b) => b.columns.id), column((b) => b.columns.integration_id), column((b) => b.columns.conversation_id),
      column((b) => b.columns.user_id), column((b) => b.columns.is_bot), column((b) => b.columns.payload), column((b) => b.columns.metadata ?? null),
      column((b) => b.columns.bot_skip), column((b) => b.append.now), column((b) => b.append.requireParticipant === true),
      notifyOrd, notifyChannel, notifyMessage, column((b) => b.append.ifAbsent === true),
    ])
  }

  override async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    // In-process first, so one instance's waiters do not each hold a pool connection.
    return super.withLock(name, () => this.db.connection().execute(async (connection) => {
      await sql`SELECT pg_advisory_lock(hashtext(${`parley:${name}`}))`.execute(connection)
      try {
        return await fn()
      } finally {
        await sql`SELECT pg_advisory_unlock(hashtext(${`parley:${name}`}))`.execute(connection)
      }
    }))
  }
}

/**
 * PostgreSQL through node-postgres: the same KyselyStore (same queries) as SQLite, on a pool.
 * Migrations run on open under Kysely's migration lock (a PostgreSQL advisory lock), so several
 * instances can start at once on an empty database: one migrates, the others wait and find
 * nothing left to do.
 */
export async function createPostgresStore(options: PostgresOptions): Promise<PostgresStore> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    // Bounded waits: while PostgreSQL is unreachable, requests fail fast (503) instead of piling up.
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    query_timeout: 15_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'parley',
    types: parleyTypeParsers(),
  })
  // Without a listener an idle connection's error (server restart, network cut) would crash the process.
  pool.on('error', (err) => options.onPoolError?.(err))
  // The pool listens only while a connection is idle: one checked out between two queries (a
  // transaction, a reserved connection) that the server terminates (`pg_ctl stop`, 57P01) would
  // emit an unhandled 'error' and kill the process. Its next query fails (503) and the pool drops it.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) })
  try {
    // Startup self-check, as for SQLite: an acknowledged write must be on disk before we answer.
    const { rows } = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db)
    const setting = rows[0]?.synchronous_commit
    if (setting === 'off') {
      throw new Error('PostgreSQL has synchronous_commit=off: acknowledged writes could be lost in a crash; Parley refuses to run with it (set it to on)')
    }
    await migrateToLatest(db, 'postgres')
  } catch (err) {
    await db.destroy().catch(() => {})
    throw err
  }
  return new PostgresStore(db, options)
}
