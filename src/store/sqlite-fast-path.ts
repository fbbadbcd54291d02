import type SqliteDatabase from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from './kysely/schema.js'
import { KyselyStore } from './kysely/kysely-store.js'
import type { ConversationRow, EventRow, MessageRow, NewEvent, NewMessage } from './store.js'

type Seq = { last_seq: number; last_at: number }
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

/**
 * The SQLite engine's hot path (createMessage, createEvent and their access check) on raw, prepared
 * better-sqlite3 statements: one synchronous transaction instead of Kysely's query building and its
 * BEGIN/COMMIT round trips through the async connection mutex (bench/ANALYSIS.md §4–§5).
 *
 * Kysely keeps a transaction open across awaits on this single connection. A synchronous statement
 * issued meanwhile would run inside that other transaction (and vanish with its rollback, or read its
 * uncommitted rows), so whenever a transaction is open the fast path steps aside and the Kysely
 * implementation queues behind it on the mutex.
 */
export class SqliteStore extends KyselyStore {
  private readonly access: SqliteDatabase.Statement<unknown[], AccessRow>
  private readonly seq: SqliteDatabase.Statement<unknown[], Seq>
  private readonly seqIfParticipant: SqliteDatabase.Statement<unknown[], Seq>
  private readonly insertMessage: SqliteDatabase.Statement<unknown[]>
  private readonly insertEvent: SqliteDatabase.Statement<unknown[]>
  private readonly appendMessageTx: (m: NewMessage) => MessageRow | undefined
  private readonly appendEventTx: (e: NewEvent) => EventRow | undefined

  constructor(db: Kysely<Database>, private readonly sqlite: SqliteDatabase.Database) {
    super(db, 'sqlite')
    this.access = sqlite.prepare(`SELECT c.integration_id, c.id, c.owner_id, c.last_seq, c.created_at, c.updated_at, p.user_id AS participant
      FROM conversations c LEFT JOIN participants p ON p.integration_id = c.integration_id AND p.conversation_id = c.id AND p.user_id = ?
      WHERE c.integration_id = ? AND c.id = ?`)
    this.seq = sqlite.prepare(`${SEQ} RETURNING last_seq, last_at`)
    this.seqIfParticipant = sqlite.prepare(`${SEQ}${IF_PARTICIPANT} RETURNING last_seq, last_at`)
    this.insertMessage = sqlite.prepare(`INSERT INTO messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    this.insertEvent = sqlite.prepare(`INSERT INTO events (id, integration_id, conversation_id, seq, user_id, is_bot, payload, bot_skip, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    this.appendMessageTx = sqlite.transaction((m: NewMessage) => {
      const next = this.nextSeqSync(m)
      if (!next) return undefined
      const botSkip = m.botSkip ?? false
      this.insertMessage.run(
        m.id, m.integrationId, m.conversationId, next.last_seq, m.userId, m.isBot ? 1 : 0, JSON.stringify(m.payload),
        m.metadata === null ? null : JSON.stringify(m.metadata), botSkip ? 1 : 0, next.last_at,
      )
      return {
        id: m.id, integrationId: m.integrationId, conversationId: m.conversationId, seq: next.last_seq, userId: m.userId,
        isBot: m.isBot, payload: m.payload, metadata: m.metadata, botSkip, createdAt: next.last_at,
      }
    })
    this.appendEventTx = sqlite.transaction((e: NewEvent) => {
      const next = this.nextSeqSync(e)
      if (!next) return undefined
      const botSkip = e.botSkip ?? false
      this.insertEvent.run(
        e.id, e.integrationId, e.conversationId, next.last_seq, e.userId, e.isBot ? 1 : 0, JSON.stringify(e.payload), botSkip ? 1 : 0, next.last_at,
      )
      return {
        id: e.id, integrationId: e.integrationId, conversationId: e.conversationId, seq: next.last_seq, userId: e.userId,
        isBot: e.isBot, payload: e.payload, botSkip, createdAt: next.last_at,
      }
    })
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

  override getConversationFor(integrationId: string, conversationId: string, userId: string): Promise<{ conversation: ConversationRow; isParticipant: boolean } | undefined> {
    if (!this.free) return super.getConversationFor(integrationId, conversationId, userId)
    return settle(() => {
      const r = this.access.get(userId, integrationId, conversationId)
      return r && {
        conversation: { integrationId: r.integration_id, id: r.id, ownerId: r.owner_id, lastSeq: r.last_seq, createdAt: r.created_at, updatedAt: r.updated_at },
        isParticipant: r.participant !== null,
      }
    })
  }

  override appendMessage(m: NewMessage): Promise<MessageRow | undefined> {
    if (!this.free) return super.appendMessage(m)
    return settle(() => this.appendMessageTx(m))
  }

  override appendEvent(e: NewEvent): Promise<EventRow | undefined> {
    if (!this.free) return super.appendEvent(e)
    return settle(() => this.appendEventTx(e))
  }
}
