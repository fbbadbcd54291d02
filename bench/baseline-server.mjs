// Baseline for `npm run bench`: the floor a "POST a message" endpoint can reach on this machine.
// Bare fastify + better-sqlite3, no framework of ours: an ajv body schema equivalent to Parley's
// createMessage body, one INSERT of the same row into the same `messages` table (Parley's own
// migration file is applied, so the table shape, indexes and FK are identical), WAL +
// synchronous=NORMAL + foreign_keys=ON, time-ordered (UUIDv7) ids, a response schema, 201.
//
// What it deliberately does NOT do (and Parley does): resolve the webhook, authenticate the user
// key, check conversation membership, take the per-conversation seq in a transaction, run hooks
// (CORS, metrics, logging). The per-conversation seq is an in-memory counter here.
//
// Env: PORT (required, 127.0.0.1), BENCH_DATA_DIR (default: the working directory). Plain JS so that it is started
// exactly like Parley's compiled build: `taskset -c 0 node <file>`.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import Database from 'better-sqlite3'

const port = Number(process.env.PORT)
const dataDir = process.env.BENCH_DATA_DIR || process.cwd()
if (!port) throw new Error('PORT is required')

// ---- time-ordered ids (same algorithm as Parley's src/lib/ids.ts) ----
let lastMs = 0
let counter = 0
function uuidv7() {
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

// ---- database: Parley's schema, same pragmas ----
const db = new Database(join(dataDir, 'baseline.db'))
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('busy_timeout = 5000')
db.pragma('foreign_keys = ON')
const migration = fileURLToPath(new URL('../migrations/sqlite/0001_init.sql', import.meta.url))
db.exec(readFileSync(migration, 'utf8'))
const INTEGRATION = 'int_baseline'

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
/** Conversations are seeded with foreign_keys off (no workspace/bot/integration chain); messages are checked against them. */
function createConversation(id) {
  const now = Date.now()
  db.pragma('foreign_keys = OFF')
  try {
    seedRow('conversations', { integration_id: INTEGRATION, id, owner_id: 'bench-user', created_at: now, updated_at: now })
  } finally {
    db.pragma('foreign_keys = ON')
  }
}

/**
 * The message INSERT, column for column what Parley stores. Columns added to the table later that are
 * NOT NULL without a default get a neutral constant, so the baseline keeps the table's exact shape.
 */
const messageValues = (id, conversationId, seq, userId, payload, metadata, createdAt) => ({
  id, integration_id: INTEGRATION, conversation_id: conversationId, seq, user_id: userId, is_bot: 0,
  payload: JSON.stringify(payload), metadata: metadata ? JSON.stringify(metadata) : null, created_at: createdAt,
})
const messageColumns = Object.keys(messageValues('', '', 0, '', {}, null, 0))
const extraColumns = db.pragma('table_info(messages)')
  .filter((c) => !messageColumns.includes(c.name) && c.notnull && c.dflt_value === null)
  .map((c) => [c.name, /INT|REAL/i.test(c.type) ? 0 : ''])
const insertColumns = [...messageColumns, ...extraColumns.map(([name]) => name)]
const insertMessage = db.prepare(`INSERT INTO messages (${insertColumns.join(', ')}) VALUES (${insertColumns.map((c) => '@' + c).join(', ')})`)
const extra = Object.fromEntries(extraColumns)

/** conversationId → last seq (Parley keeps this in conversations.last_seq, updated in the same transaction). */
const seqs = new Map()

// ---- HTTP ----
const app = Fastify({ logger: false })
const addFormats = addFormatsModule.default ?? addFormatsModule
const bodyAjv = addFormats(new Ajv({ useDefaults: true, removeAdditional: false, strict: false, allErrors: false, coerceTypes: false }))
app.setValidatorCompiler(({ schema }) => bodyAjv.compile(schema))

const JsonObject = { type: 'object', additionalProperties: true }
const TextPayload = {
  type: 'object',
  required: ['type', 'text'],
  additionalProperties: false,
  properties: { type: { const: 'text' }, text: { type: 'string', minLength: 1 } },
}
const MessageBody = {
  type: 'object',
  required: ['conversationId', 'payload'],
  additionalProperties: false,
  properties: { conversationId: { type: 'string', minLength: 1 }, payload: TextPayload, metadata: JsonObject },
}
const MessageOut = {
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

app.get('/healthz', {
  schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } } },
}, async () => ({ status: 'ok' }))

app.post('/conversations', {
  schema: { body: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } },
}, async (request, reply) => {
  createConversation(request.body.id)
  seqs.set(request.body.id, 0)
  return reply.code(201).send({ conversation: { id: request.body.id } })
})

app.post('/messages', {
  schema: {
    body: MessageBody,
    response: { 201: { type: 'object', required: ['message'], properties: { message: MessageOut } } },
  },
}, async (request, reply) => {
  const { conversationId, payload, metadata } = request.body
  const last = seqs.get(conversationId)
  if (last === undefined) return reply.code(404).send({ message: 'no such conversation' })
  const seq = last + 1
  seqs.set(conversationId, seq)
  const id = uuidv7()
  const createdAt = Date.now()
  const userId = 'bench-user'
  insertMessage.run({ ...messageValues(id, conversationId, seq, userId, payload, metadata, createdAt), ...extra })
  return reply.code(201).send({
    message: { id, createdAt: new Date(createdAt).toISOString(), payload, userId, conversationId, ...(metadata && { metadata }) },
  })
})

await app.listen({ port, host: '127.0.0.1' })
process.stdout.write(`baseline listening on ${port}\n`)

const stop = async () => {
  await app.close()
  db.close()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
