import type SqliteDatabase from 'better-sqlite3'
import type { Kysely, Selectable } from 'kysely'
import type { Database } from './kysely/schema.js'
import type { VectorEngine } from './passage-vector-store.js'
import { KyselyStore } from './kysely/kysely-store.js'
import { KyselyHandoffStore } from './kysely/kysely-handoff-store.js'
import { IdTaken, mergeSignals, ownerOf, takenAnswer, toEvent, toMessage } from './kysely/rows.js'
import { applyStatePatch, isEmptyPatch } from '../lib/state-patch.js'
import type { Appended, BotCursor, BotStateKey, BotTurnEnd, ConversationRow, EventRow, JsonObject, MessageRow, NewEvent, NewMessage, SignalRecord } from './store.js'

type Seq = { last_seq: number; last_at: number }
type Row<T extends keyof Database> = Selectable<Database[T]>
type CursorRow = { bot_seq: number; last_seq: number }
type AccessRow = { integration_id: string; id: string; owner_id: string; last_seq: number; created_at: number; updated_at: number; participant: string | null }

const SEQ = `UPDATE conversations SET last_seq = last_seq + 1, last_at = CASE WHEN last_at >= ? THEN last_at + 1 ELSE ? END, updated_at = ?
  WHERE integration_id = ? AND id = ?`
const IF_PARTICIPANT = ' AND EXISTS (SELECT 1 FROM participants WHERE integration_id = ? AND conversation_id = ? AND user_id = ?)'

/** Runs synchronous work with the Store's contract: a database error is a rejected promise, never a throw. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work())
  } catch (err) {
    return Promise.reject(err as Error)
  }
}

interface PendingWrite {
  work: () => unknown
  /** The Kysely implementation, for when the batch cannot run (a Kysely transaction is open). */
  fallback: () => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/**
 * The range of one of a conversation's signal tables (messages, events, conversation_signals).
 * `LIMIT CAST(? AS INTEGER)`: better-sqlite3 binds a JS number as a REAL, and a REAL limit made this
 * query ~4x slower (12 µs instead of 3, measured), most of a stream delivery's store time.
 */
const signalRange = (table: string) =>
  `SELECT * FROM ${table} WHERE integration_id = ? AND conversation_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT CAST(? AS INTEGER)`

/**
 * The SQLite engine's hot paths on raw, prepared better-sqlite3 statements: createMessage, createEvent
 * and their access check, and every store call of a bot turn (claim, signals, states, finish,
 * release). One synchronous statement or transaction each instead of Kysely's query building and its
 * BEGIN/COMMIT round trips through the async connection mutex (bench/ANALYSIS.md §4–§5): a turn made
 * some 20 Kysely queries, which were most of the main thread's time per turn.
 *
 * Kysely keeps a transaction open across awaits on this single connection. A synchronous statement
 * issued meanwhile would run inside that other transaction (and vanish with its rollback, or read its
 * uncommitted rows), so whenever a transaction is open the fast path steps aside and the Kysely
 * implementation queues behind it on the mutex.
 *
 * Group commit (engineering notes §3.3): writes (appends; a bot turn's claim, finish and release)
 * made during one turn of the event loop are committed together at the end of it (setImmediate),
 * each in its own savepoint so that one failing write does not undo the others. Every caller is
 * answered only after the commit that holds its write.
 */
export class SqliteStore extends KyselyStore {
  private readonly access: SqliteDatabase.Statement<unknown[], AccessRow>
  private readonly seq: SqliteDatabase.Statement<unknown[], Seq>
  private readonly seqIfParticipant: SqliteDatabase.Statement<unknown[], Seq>
  private readonly insertMessage: { plain: SqliteDatabase.Statement<unknown[]>; ifAbsent: SqliteDatabase.Statement<unknown[]> }
  private readonly insertEvent: { plain: SqliteDatabase.Statement<unknown[]>; ifAbsent: SqliteDatabase.Statement<unknown[]> }
  private readonly appendMessageTx: (m: NewMessage) => MessageRow | undefined
  private readonly appendEventTx: (e: NewEvent) => EventRow | undefined
  private readonly commitBatch: (batch: PendingWrite[], outcomes: ({ ok: unknown } | { err: unknown })[]) => void
  private readonly turn: ReturnType<typeof prepareTurnStatements>
  private readonly finishTurnTx: (turn: BotTurnEnd) => BotCursor | undefined
  private readonly releaseTx: (integrationId: string, conversationId: string, owner: string) => BotCursor | undefined
  /** The handoff repository with its per-turn question (is this message a person's?) on a prepared statement. */
  override readonly handoffs: KyselyHandoffStore
  private pending: PendingWrite[] = []
  private flushScheduled = false

  constructor(db: Kysely<Database>, private readonly sqlite: SqliteDatabase.Database, vectorEngine?: VectorEngine) {
    super(db, 'sqlite', vectorEngine)
    this.access = sqlite.prepare(`SELECT c.integration_id, c.id, c.owner_id, c.last_seq, c.created_at, c.updated_at, p.user_id AS participant
      FROM conversations c LEFT JOIN participants p ON p.integration_id = c.integration_id AND p.conversation_id = c.id AND p.user_id = ?
      WHERE c.integration_id = ? AND c.id = ?`)
    this.seq = sqlite.prepare(`${SEQ} RETURNING last_seq, last_at`)
    this.seqIfParticipant = sqlite.prepare(`${SEQ}${IF_PARTICIPANT} RETURNING last_seq, last_at`)
    const insertMessage = `INSERT INTO messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
    const insertEvent = `INSERT INTO events (id, integration_id, conversation_id, seq, user_id, is_bot, payload, bot_skip, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
    // `ifAbsent` appends insert nothing when the id is taken (the statement's `changes` says so); others fail.
    this.insertMessage = { plain: sqlite.prepare(insertMessage), ifAbsent: sqlite.prepare(`${insertMessage} ON CONFLICT (id) DO NOTHING`) }
    this.insertEvent = { plain: sqlite.prepare(insertEvent), ifAbsent: sqlite.prepare(`${insertEvent} ON CONFLICT (id) DO NOTHING`) }
    this.appendMessageTx = sqlite.transaction((m: NewMessage) => {
      const next = this.nextSeqSync(m)
      if (!next) return undefined
      const botSkip = m.botSkip ?? false
      const inserted = (m.ifAbsent ? this.insertMessage.ifAbsent : this.insertMessage.plain).run(
        m.id, m.integrationId, m.conversationId, next.last_seq, m.userId, m.isBot ? 1 : 0, JSON.stringify(m.payload),
        m.metadata === null ? null : JSON.stringify(m.metadata), botSkip ? 1 : 0, next.last_at,
      )
      // The id is taken: undo the seq (the transaction, or the batch's savepoint, rolls back).
      if (inserted.changes === 0) throw new IdTaken()
      return {
        id: m.id, integrationId: m.integrationId, conversationId: m.conversationId, seq: next.last_seq, userId: m.userId,
        isBot: m.isBot, payload: m.payload, metadata: m.metadata, botSkip, createdAt: next.last_at,
      }
    })
    this.appendEventTx = sqlite.transaction((e: NewEvent) => {
      const next = this.nextSeqSync(e)
      if (!next) return undefined
      const botSkip = e.botSkip ?? false
      const inserted = (e.ifAbsent ? this.insertEvent.ifAbsent : this.insertEvent.plain).run(
        e.id, e.integrationId, e.conversationId, next.last_seq, e.userId, e.isBot ? 1 : 0, JSON.stringify(e.payload), botSkip ? 1 : 0, next.last_at,
      )
      if (inserted.changes === 0) throw new IdTaken()
      return {
        id: e.id, integrationId: e.integrationId, conversationId: e.conversationId, seq: next.last_seq, userId: e.userId,
        isBot: e.isBot, payload: e.payload, botSkip, createdAt: next.last_at,
      }
    })
    this.turn = prepareTurnStatements(sqlite)
    const t = this.turn
    this.handoffs = new SqliteHandoffStore(db, t.handoffCovering, (sync, fallback) => this.read(sync, fallback))
    this.finishTurnTx = sqlite.transaction((turn: BotTurnEnd) => {
      for (const e of turn.states) {
        if (e.patch && isEmptyPatch(e.patch)) continue
        let value = e.data
        if (e.patch) {
          const row = t.state.get(turn.botId, e.scope, e.scopeId)
          value = applyStatePatch(row ? (JSON.parse(row.data) as JsonObject) : undefined, e.patch)
        }
        t.upsertState.run(turn.botId, e.scope, e.scopeId, JSON.stringify(value), turn.now)
      }
      for (const l of turn.logs) t.insertLog.run(l.id, l.botId, l.at, l.level, l.message, l.conversationId)
      t.advanceCursor.run(turn.seq, turn.integrationId, turn.conversationId, turn.seq)
      if (turn.lease) t.renewLease.run(turn.now + turn.lease.ttlMs, turn.integrationId, turn.conversationId, turn.lease.owner)
      return turn.release === undefined ? undefined : this.releaseTx(turn.integrationId, turn.conversationId, turn.release)
    })
    this.releaseTx = sqlite.transaction((integrationId: string, conversationId: string, owner: string) => {
      t.releaseLease.run(integrationId, conversationId, owner)
      const r = t.cursor.get(integrationId, conversationId)
      return r && { botSeq: r.bot_seq, lastSeq: r.last_seq }
    })
    this.commitBatch = sqlite.transaction((batch: PendingWrite[], outcomes: ({ ok: unknown } | { err: unknown })[]) => {
      for (const item of batch) {
        try {
          outcomes.push({ ok: item.work() })
        } catch (err) {
          outcomes.push({ err })
        }
      }
    })
  }

  /** Queues synchronous write work (a nested better-sqlite3 transaction: a savepoint) for the next group commit. */
  private enqueue<T>(work: () => T, fallback: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, fallback, resolve: resolve as (value: unknown) => void, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(this.flush)
      }
    })
  }

  private readonly flush = (): void => {
    this.flushScheduled = false
    const batch = this.pending
    this.pending = []
    if (batch.length === 0) return
    if (this.sqlite.inTransaction || !this.sqlite.open) {
      for (const item of batch) item.fallback().then(item.resolve, item.reject)
      return
    }
    if (batch.length === 1) {
      const item = batch[0]!
      settle(item.work).then(item.resolve, item.reject)
      return
    }
    const outcomes: ({ ok: unknown } | { err: unknown })[] = []
    try {
      this.commitBatch(batch, outcomes)
    } catch (err) {
      // The commit itself failed (disk full, I/O error): nothing of the batch is stored.
      for (const item of batch) item.reject(err)
      return
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!
      if ('ok' in outcome) item.resolve(outcome.ok)
      else item.reject(outcome.err)
    })
  }

  override async close(): Promise<void> {
    this.flush()
    await super.close()
  }

  private nextSeqSync(m: NewMessage | NewEvent): Seq | undefined {
    return m.requireParticipant
      ? this.seqIfParticipant.get(m.now, m.now, m.now, m.integrationId, m.conversationId, m.integrationId, m.conversationId, m.userId)
      : this.seq.get(m.now, m.now, m.now, m.integrationId, m.conversationId)
  }

  /** True when the fast path may touch the connection: no Kysely transaction is open on it. */
  private get free(): boolean {
    return !this.sqlite.inTransaction
  }

  /** A read on the fast path when the connection is free, else through Kysely (queued behind its open transaction). */
  private read<T>(sync: () => T, fallback: () => Promise<T>): Promise<T> {
    return this.free ? settle(sync) : fallback()
  }

  override getConversationFor(integrationId: string, conversationId: string, userId: string): Promise<{ conversation: ConversationRow; isParticipant: boolean } | undefined> {
    return this.read(() => {
      const r = this.access.get(userId, integrationId, conversationId)
      return r && {
        conversation: { integrationId: r.integration_id, id: r.id, ownerId: ownerOf(r.owner_id), lastSeq: r.last_seq, createdAt: r.created_at, updatedAt: r.updated_at },
        isParticipant: r.participant !== null,
      }
    }, () => super.getConversationFor(integrationId, conversationId, userId))
  }

  override getMessage(integrationId: string, id: string): Promise<MessageRow | undefined> {
    return this.read(() => {
      const r = this.turn.message.get(id, integrationId)
      return r && toMessage(r)
    }, () => super.getMessage(integrationId, id))
  }

  override getEvent(integrationId: string, id: string): Promise<EventRow | undefined> {
    return this.read(() => {
      const r = this.turn.event.get(id, integrationId)
      return r && toEvent(r)
    }, () => super.getEvent(integrationId, id))
  }

  /**
   * The three tables read synchronously, so no write lands between them (the bound keeps
   * KyselyStore's semantics). Each seq belongs to one row of one table, so when the messages alone
   * fill the wanted range without a gap (the usual case), the other two tables have nothing in it.
   */
  override signalsSince(integrationId: string, conversationId: string, afterSeq: number, limit: number): Promise<SignalRecord[]> {
    return this.read(() => {
      const t = this.turn
      const bound = t.lastSeq.get(integrationId, conversationId)
      if (!bound || bound.last_seq <= afterSeq) return []
      const range = [integrationId, conversationId, afterSeq, bound.last_seq, limit] as const
      const messages = t.messages.all(...range)
      const wanted = Math.min(bound.last_seq - afterSeq, limit)
      if (messages.length === wanted && messages[wanted - 1]!.seq === afterSeq + wanted) return mergeSignals(messages, [], [], limit)
      return mergeSignals(messages, t.events.all(...range), t.signals.all(...range), limit)
    }, () => super.signalsSince(integrationId, conversationId, afterSeq, limit))
  }

  override getBotStates(botId: string, keys: BotStateKey[]): Promise<(JsonObject | undefined)[]> {
    return this.read(() => keys.map((k) => {
      const r = this.turn.state.get(botId, k.scope, k.scopeId)
      return r && (JSON.parse(r.data) as JsonObject)
    }), () => super.getBotStates(botId, keys))
  }

  // Writes of a turn join the group commit, like appends.
  override claimBotConversation(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<BotCursor | undefined> {
    return this.enqueue(() => {
      const r = this.turn.claim.get(owner, now + ttlMs, integrationId, conversationId, now, owner)
      return r && { botSeq: r.bot_seq, lastSeq: r.last_seq }
    }, () => super.claimBotConversation(integrationId, conversationId, owner, now, ttlMs))
  }

  override finishBotTurn(turn: BotTurnEnd): Promise<BotCursor | undefined> {
    return this.enqueue(() => this.finishTurnTx(turn), () => super.finishBotTurn(turn))
  }

  override releaseBotConversation(integrationId: string, conversationId: string, owner: string): Promise<BotCursor | undefined> {
    return this.enqueue(() => this.releaseTx(integrationId, conversationId, owner), () => super.releaseBotConversation(integrationId, conversationId, owner))
  }

  override advanceBotCursor(integrationId: string, conversationId: string, seq: number): Promise<void> {
    return this.enqueue(() => void this.turn.advanceCursor.run(seq, integrationId, conversationId, seq), () => super.advanceBotCursor(integrationId, conversationId, seq))
  }

  /** A taken id (IdTaken, rolled back) answers the stored row, read in the same group commit (see Appended). */
  override appendMessage(m: NewMessage): Promise<Appended<MessageRow> | undefined> {
    return this.enqueue(() => appendOnce(() => this.appendMessageTx(m), () => {
      const r = this.turn.message.get(m.id, m.integrationId)
      return takenAnswer(m, r && toMessage(r), 'Message')
    }), () => super.appendMessage(m))
  }

  override appendEvent(e: NewEvent): Promise<Appended<EventRow> | undefined> {
    return this.enqueue(() => appendOnce(() => this.appendEventTx(e), () => {
      const r = this.turn.event.get(e.id, e.integrationId)
      return takenAnswer(e, r && toEvent(r), 'Event')
    }), () => super.appendEvent(e))
  }
}

function appendOnce<T>(append: () => Appended<T> | undefined, taken: () => Appended<T>): Appended<T> | undefined {
  try {
    return append()
  } catch (err) {
    if (err instanceof IdTaken) return taken()
    throw err
  }
}

/** The prepared statements of a bot turn's store calls (same SQL semantics as KyselyStore's). */
function prepareTurnStatements(sqlite: SqliteDatabase.Database) {
  return {
    // KyselyHandoffStore.coveredAt's query (index handoffs_conversation).
    handoffCovering: sqlite.prepare<unknown[], { id: string }>(`SELECT id FROM handoffs WHERE integration_id = ? AND conversation_id = ? AND requested_at <= ?
      AND (ended_at IS NULL OR ended_at > ?) LIMIT 1`),
    message: sqlite.prepare<unknown[], Row<'messages'>>('SELECT * FROM messages WHERE id = ? AND integration_id = ?'),
    event: sqlite.prepare<unknown[], Row<'events'>>('SELECT * FROM events WHERE id = ? AND integration_id = ?'),
    lastSeq: sqlite.prepare<unknown[], { last_seq: number }>('SELECT last_seq FROM conversations WHERE integration_id = ? AND id = ?'),
    messages: sqlite.prepare<unknown[], Row<'messages'>>(signalRange('messages')),
    events: sqlite.prepare<unknown[], Row<'events'>>(signalRange('events')),
    signals: sqlite.prepare<unknown[], Row<'conversation_signals'>>(signalRange('conversation_signals')),
    state: sqlite.prepare<unknown[], { data: string }>('SELECT data FROM bot_states WHERE bot_id = ? AND scope = ? AND scope_id = ?'),
    upsertState: sqlite.prepare(`INSERT INTO bot_states (bot_id, scope, scope_id, data, updated_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (bot_id, scope, scope_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`),
    insertLog: sqlite.prepare('INSERT INTO bot_logs (id, bot_id, at, level, message, conversation_id) VALUES (?, ?, ?, ?, ?, ?)'),
    advanceCursor: sqlite.prepare('UPDATE conversations SET bot_seq = ? WHERE integration_id = ? AND id = ? AND bot_seq < ?'),
    renewLease: sqlite.prepare('UPDATE conversations SET bot_lease_until = ? WHERE integration_id = ? AND id = ? AND bot_lease_owner = ?'),
    claim: sqlite.prepare<unknown[], CursorRow>(`UPDATE conversations SET bot_lease_owner = ?, bot_lease_until = ?
      WHERE integration_id = ? AND id = ? AND (bot_lease_until < ? OR bot_lease_owner = ? OR bot_lease_owner IS NULL) RETURNING bot_seq, last_seq`),
    releaseLease: sqlite.prepare('UPDATE conversations SET bot_lease_owner = NULL, bot_lease_until = 0 WHERE integration_id = ? AND id = ? AND bot_lease_owner = ?'),
    cursor: sqlite.prepare<unknown[], CursorRow>('SELECT bot_seq, last_seq FROM conversations WHERE integration_id = ? AND id = ?'),
  }
}

/**
 * The bot runtime asks, for every incoming message, whether a handoff covered it (BotRuntime, HandoffService.handedOffAt):
 * one prepared statement instead of Kysely's query building (about 35 µs of CPU a turn, measured with 20,000 calls).
 */
class SqliteHandoffStore extends KyselyHandoffStore {
  constructor(
    db: Kysely<Database>,
    private readonly covering: SqliteDatabase.Statement<unknown[], { id: string }>,
    private readonly read: <T>(sync: () => T, fallback: () => Promise<T>) => Promise<T>,
  ) {
    super(db)
  }

  override coveredAt(integrationId: string, conversationId: string, at: number): Promise<boolean> {
    return this.read(() => this.covering.get(integrationId, conversationId, at, at) !== undefined, () => super.coveredAt(integrationId, conversationId, at))
  }
}
