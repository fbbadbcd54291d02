// Lists the SQL statements one createMessage runs in the compiled build (dist/), before the 201
// and afterwards (the bot turn), for a bot without code and for the bootstrap demo bot.
// Usage: npm run build && node bench/tools/count-statements.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dist = (path) => new URL(`../../dist/${path}`, import.meta.url).href
const Database = createRequire(import.meta.url)('better-sqlite3')
const prepare = Database.prototype.prepare
let log = null
Database.prototype.prepare = function (sql) {
  log?.push(sql)
  return prepare.call(this, sql)
}

const { buildApp } = await import(dist('app.js'))
const { loadConfig } = await import(dist('config.js'))
const { bootstrap } = await import(dist('domain/bootstrap.js'))
const { MemoryPubSub } = await import(dist('pubsub/memory.js'))
const { createSqliteStore } = await import(dist('store/sqlite.js'))

const dataDir = mkdtempSync(join(tmpdir(), 'parley-count-'))
const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: '0' })
const store = await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: 'NORMAL' })
const app = await buildApp({ config, store, pubsub: new MemoryPubSub(), logger: false })
await app.ready()
const { credentials } = await bootstrap(store, dataDir, 'http://127.0.0.1')
const admin = { authorization: `Bearer ${credentials.token}`, 'x-workspace-id': credentials.workspaceId }
const created = await app.inject({ method: 'POST', url: '/v1/admin/bots', headers: admin, payload: { name: 'No code', integrations: { chat: { enabled: true } } } })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

for (const [label, webhookId] of [['bot without code', created.json().bot.integrations.chat.webhookId], ['demo bot', credentials.chat.webhookId]]) {
  const { key } = (await app.inject({ method: 'POST', url: `/${webhookId}/users`, payload: {} })).json()
  const { conversation } = (await app.inject({ method: 'POST', url: `/${webhookId}/conversations`, headers: { 'x-user-key': key }, payload: {} })).json()
  await sleep(500) // let the welcome turn finish
  for (let round = 0; round < 2; round++) { // the second message is the steady state
    log = []
    const res = await app.inject({
      method: 'POST', url: `/${webhookId}/messages`, headers: { 'x-user-key': key },
      payload: { conversationId: conversation.id, payload: { type: 'text', text: 'Hello there' } },
    })
    const before = log.length
    await sleep(500)
    if (round === 0) continue
    console.log(`\n${label}: HTTP ${res.statusCode}; ${before} statements until the response, ${log.length - before} after it`)
    log.forEach((sql, i) => console.log(`  ${i < before ? 'request' : 'after  '}  ${sql.length > 140 ? sql.slice(0, 140) + '…' : sql}`))
  }
}
log = null
await app.close()
await store.close()
rmSync(dataDir, { recursive: true, force: true })
