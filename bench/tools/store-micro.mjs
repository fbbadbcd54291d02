// Where createMessage's database time goes, without HTTP: the statements one createMessage runs
// (bot without code), timed sequentially through Parley's KyselyStore as built, through the same
// store with a prepared-statement cache, and as raw better-sqlite3 (prepare per call / cached).
// Usage: npm run build && taskset -c 0 node bench/tools/store-micro.mjs [dir, default /dev/shm or tmpdir]
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dist = (path) => new URL(`../../dist/${path}`, import.meta.url).href
const require = createRequire(import.meta.url)
const Database = require('better-sqlite3')
const { Kysely, SqliteDialect } = await import(require.resolve('kysely'))
const { createSqliteStore } = await import(dist('store/sqlite.js'))
const { KyselyStore } = await import(dist('store/kysely/kysely-store.js'))
const { bootstrap } = await import(dist('domain/bootstrap.js'))
const { uuidv7 } = await import(dist('lib/ids.js'))

const root = process.argv[2] ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir())
const dataDir = mkdtempSync(join(root, 'parley-micro-'))
const file = join(dataDir, 'parley.db')

// Seed through the real store: workspace, a bot without code, a user with a key, a conversation.
const seed = await createSqliteStore({ file, synchronous: 'NORMAL' })
const { credentials } = await bootstrap(seed, dataDir, 'http://127.0.0.1', { demoCode: false })
const integration = await seed.getIntegrationByWebhookId(credentials.chat.webhookId)
const now = Date.now()
const userId = 'bench-user'
await seed.createUser({ integrationId: integration.id, id: userId, now })
const key = 'uk_micro'
const keyHash = createHash('sha256').update(key).digest('base64url')
await seed.addUserKey(integration.id, userId, keyHash, now)
const conversationId = 'bench-conversation'
await seed.createConversation(integration.id, conversationId, userId, now)
await seed.close()

function open({ cache }) {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  if (cache) {
    const statements = new Map()
    const prepare = db.prepare.bind(db)
    db.prepare = (sql) => {
      let s = statements.get(sql)
      if (!s) statements.set(sql, (s = prepare(sql)))
      return s
    }
  }
  return db
}

const N = Number(process.env.MICRO_N ?? 20000)
async function time(label, fn) {
  for (let i = 0; i < Math.min(2000, N); i++) await fn()
  const t0 = performance.now()
  for (let i = 0; i < N; i++) await fn()
  console.log(`${label.padEnd(72)} ${((performance.now() - t0) * 1000 / N).toFixed(1).padStart(7)} µs/op`)
}

const message = () => ({
  id: uuidv7(), integrationId: integration.id, conversationId, userId, isBot: false,
  payload: { type: 'text', text: 'Hello! I would like to know the status of my order #4521, please.' }, metadata: null, botSkip: false, now: Date.now(),
})

// What ChatService does for one createMessage (its exact calls may drift; see count-statements.mjs).
async function viaStore(store) {
  const i = await store.getIntegrationByWebhookId(credentials.chat.webhookId)
  const u = await store.findUserByKeyHash(i.id, keyHash)
  if (store.getConversationFor) await store.getConversationFor(i.id, conversationId, u.id)
  else {
    await store.getConversation(i.id, conversationId)
    await store.isParticipant(i.id, conversationId, u.id)
  }
  await store.appendMessage(message())
}

for (const cache of [false, true]) {
  const store = new KyselyStore(new Kysely({ dialect: new SqliteDialect({ database: open({ cache }) }) }), 'sqlite')
  const tag = cache ? 'KyselyStore + statement cache' : 'KyselyStore as built'
  await time(`${tag}: lookups + appendMessage (one createMessage)`, () => viaStore(store))
  await time(`${tag}: appendMessage only`, () => store.appendMessage(message()))
  await time(`${tag}: getIntegrationByWebhookId only`, () => store.getIntegrationByWebhookId(credentials.chat.webhookId))
  await time(`${tag}: empty transaction`, () => store.db.transaction().execute(async () => {}))
  await store.close()
}

// Raw better-sqlite3 doing the same work: 3 reads, then BEGIN / UPDATE … RETURNING / INSERT / COMMIT.
const db = open({ cache: false })
const SQL = {
  integration: 'select * from integrations where webhook_id = ?',
  user: 'select u.* from user_keys k join users u on u.integration_id = k.integration_id and u.id = k.user_id where k.key_hash = ? and k.integration_id = ?',
  conversation: 'select c.*, p.user_id as participant from conversations c left join participants p on p.integration_id = c.integration_id and p.conversation_id = c.id and p.user_id = ? where c.integration_id = ? and c.id = ?',
  begin: 'begin',
  next: 'update conversations set last_seq = last_seq + 1, last_at = case when last_at >= ? then last_at + 1 else ? end, updated_at = ? where integration_id = ? and id = ? returning last_seq, last_at',
  insert: 'insert into messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  commit: 'commit',
}
const hasBotSkip = db.pragma('table_info(messages)').some((c) => c.name === 'bot_skip')
if (!hasBotSkip) SQL.insert = SQL.insert.replace(', bot_skip', '').replace('?, ?, ?, ?, ?, ?, ?, ?, ?, ?', '?, ?, ?, ?, ?, ?, ?, ?, ?')
const rawCreate = (p) => {
  const i = p('integration').get(credentials.chat.webhookId)
  const u = p('user').get(keyHash, i.id)
  p('conversation').get(u.id, i.id, conversationId)
  p('begin').run()
  const t = Date.now()
  const next = p('next').get(t, t, t, i.id, conversationId)
  const m = message()
  const values = [m.id, i.id, conversationId, next.last_seq, u.id, 0, JSON.stringify(m.payload), null, ...(hasBotSkip ? [0] : []), next.last_at]
  p('insert').run(...values)
  p('commit').run()
}
await time('raw better-sqlite3, same statements, prepare() on every call', () => rawCreate((k) => db.prepare(SQL[k])))
const cached = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)]))
await time('raw better-sqlite3, same statements, cached', () => rawCreate((k) => cached[k]))
await time('prepare() of the UPDATE … RETURNING alone', () => db.prepare(SQL.next))
await time('prepare() of the INSERT INTO messages alone', () => db.prepare(SQL.insert))
await time('uuidv7()', () => uuidv7())
db.close()
rmSync(dataDir, { recursive: true, force: true })
