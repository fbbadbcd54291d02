// The store part of the bare baselines (bench/baseline-server.mjs, bench/turns-baseline-server.mjs): better-sqlite3
// with Parley's own migration applied (the same `messages` table, indexes and FK), WAL + synchronous=NORMAL +
// foreign_keys=ON, time-ordered (UUIDv7) ids, and one cached INSERT of the row Parley stores. Plain JS, so the
// baselines start exactly like Parley's compiled build: `taskset -c 0 node <file>`.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'

// ---- time-ordered ids (same algorithm as Parley's src/lib/ids.ts) ----
let lastMs = 0
let counter = 0
export function uuidv7() {
  let ms = Date.now()
  if (ms <= lastMs) {
    if (++counter > 0xfff) { lastMs++; counter = 0 }
    ms = lastMs
  } else { lastMs = ms; counter = 0 }
  const b = randomBytes(16)
  b.writeUIntBE(ms, 0, 6)
  b[6] = 0x70 | (counter >> 8)
  b[7] = counter & 0xff
  b[8] = 0x80 | (b[8] & 0x3f)
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

const INTEGRATION = 'int_baseline'

/** Opens `<dataDir>/baseline.db` with Parley's schema and pragmas. */
export function openBaselineStore(dataDir) {
  const db = new Database(join(dataDir, 'baseline.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  db.exec(readFileSync(fileURLToPath(new URL('../../migrations/sqlite/0001_init.sql', import.meta.url)), 'utf8'))

  /**
   * Inserts a row filling NOT NULL columns we do not care about with neutral values, so that the
   * seeding survives schema changes of the parent tables. Only the message INSERT below is exact.
   */
  function seedRow(table, values) {
    const row = { ...values }
    for (const col of db.pragma(`table_info(${table})`)) {
      if (col.name in row || !col.notnull || col.dflt_value !== null || col.pk) continue
      row[col.name] = /INT|REAL/i.test(col.type) ? 0 : ''
    }
    const names = Object.keys(row)
    db.prepare(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...Object.values(row))
  }

  /**
   * The message INSERT, column for column what Parley stores. Columns added to the table later that are
   * NOT NULL without a default get a neutral constant, so the baseline keeps the table's exact shape.
   */
  const messageValues = (id, conversationId, seq, userId, isBot, payload, metadata, createdAt) => ({
    id, integration_id: INTEGRATION, conversation_id: conversationId, seq, user_id: userId, is_bot: isBot ? 1 : 0,
    payload: JSON.stringify(payload), metadata: metadata ? JSON.stringify(metadata) : null, created_at: createdAt,
  })
  const messageColumns = Object.keys(messageValues('', '', 0, '', false, {}, null, 0))
  const extraColumns = db.pragma('table_info(messages)')
    .filter((c) => !messageColumns.includes(c.name) && c.notnull && c.dflt_value === null)
    .map((c) => [c.name, /INT|REAL/i.test(c.type) ? 0 : ''])
  const insertColumns = [...messageColumns, ...extraColumns.map(([name]) => name)]
  const insert = db.prepare(`INSERT INTO messages (${insertColumns.join(', ')}) VALUES (${insertColumns.map((c) => '@' + c).join(', ')})`)
  const extra = Object.fromEntries(extraColumns)

  /** conversationId → last seq (Parley keeps this in conversations.last_seq, updated in the same transaction). */
  const seqs = new Map()

  return {
    db,
    /** Conversations are seeded with foreign_keys off (no workspace/bot/integration chain); messages are checked against them. */
    createConversation(id, ownerId) {
      const now = Date.now()
      db.pragma('foreign_keys = OFF')
      try {
        seedRow('conversations', { integration_id: INTEGRATION, id, owner_id: ownerId, created_at: now, updated_at: now })
      } finally {
        db.pragma('foreign_keys = ON')
      }
      seqs.set(id, 0)
    },
    hasConversation: (id) => seqs.has(id),
    /** One autocommit INSERT; the message as the API shows it, or undefined for an unknown conversation. */
    insertMessage({ conversationId, userId, isBot = false, payload, metadata }) {
      const last = seqs.get(conversationId)
      if (last === undefined) return undefined
      const seq = last + 1
      seqs.set(conversationId, seq)
      const id = uuidv7()
      const createdAt = Date.now()
      insert.run({ ...messageValues(id, conversationId, seq, userId, isBot, payload, metadata, createdAt), ...extra })
      return { id, createdAt: new Date(createdAt).toISOString(), payload, userId, conversationId, ...(metadata && { metadata }), isBot }
    },
    close: () => db.close(),
  }
}

// ---- HTTP: bare fastify with an ajv body validator, and createMessage's body and answer schemas ----
const addFormats = addFormatsModule.default ?? addFormatsModule

export function baselineApp() {
  const app = Fastify({ logger: false })
  const bodyAjv = addFormats(new Ajv({ useDefaults: true, removeAdditional: false, strict: false, allErrors: false, coerceTypes: false }))
  app.setValidatorCompiler(({ schema }) => bodyAjv.compile(schema))
  return app
}

export const JsonObject = { type: 'object', additionalProperties: true }
export const TextPayload = {
  type: 'object',
  required: ['type', 'text'],
  additionalProperties: false,
  properties: { type: { const: 'text' }, text: { type: 'string', minLength: 1 } },
}
export const MessageBody = {
  type: 'object',
  required: ['conversationId', 'payload'],
  additionalProperties: false,
  properties: { conversationId: { type: 'string', minLength: 1 }, payload: TextPayload, metadata: JsonObject },
}
export const MessageOut = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'createdAt', 'payload', 'userId', 'conversationId'],
  properties: {
    id: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    payload: JsonObject,
    userId: { type: 'string' },
    conversationId: { type: 'string' },
    metadata: JsonObject,
  },
}
