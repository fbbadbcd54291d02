// EXPERIMENT ONLY (not how Parley runs, and not safe in general): estimates what the optimizations
// proposed in bench/ANALYSIS.md would buy, by patching the compiled store in the server process.
//   NODE_OPTIONS="--import $PWD/bench/tools/fastpath-preload.mjs" FASTPATH=cache,auth,append \
//     BENCH_SERVERS=parley BENCH_HEALTHZ=0 BENCH_DATA_ROOT=/dev/shm npm run bench
// FASTPATH (comma list, cumulative as you like):
//   cache   prepared-statement cache in front of better-sqlite3's prepare() (Kysely prepares every query)
//   auth    memoizes the webhook → integration and key-hash → user lookups (no invalidation: experiment only)
//   conv    also memoizes the conversation + membership lookup (wrong once conversations change: estimate only)
//   append  appendMessage as one synchronous better-sqlite3 transaction with cached statements, bypassing
//           Kysely (unsafe if a Kysely transaction is open at the same time; none is on the benchmarked path)
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const features = new Set((process.env.FASTPATH ?? 'cache').split(',').map((s) => s.trim()).filter(Boolean))
const Database = require('better-sqlite3')
const prepare = Database.prototype.prepare
const caches = new WeakMap()
let parleyDb
Database.prototype.prepare = function (sql) {
  if (this.name?.endsWith('parley.db')) parleyDb = this
  if (!features.has('cache')) return prepare.call(this, sql)
  let cache = caches.get(this)
  if (!cache) caches.set(this, (cache = new Map()))
  let statement = cache.get(sql)
  if (!statement) {
    statement = prepare.call(this, sql)
    if (cache.size < 1000) cache.set(sql, statement)
  }
  return statement
}

if (features.has('auth') || features.has('append')) {
  const { KyselyStore } = await import(new URL('../../dist/store/kysely/kysely-store.js', import.meta.url).href)
  const proto = KyselyStore.prototype
  if (features.has('auth')) {
    const methods = ['getIntegrationByWebhookId', 'findUserByKeyHash', ...(features.has('conv') ? ['getConversationFor'] : [])]
    for (const method of methods) {
      const original = proto[method]
      const memo = new Map()
      proto[method] = async function (...args) {
        const key = args.join('\u0000')
        if (!memo.has(key)) memo.set(key, await original.apply(this, args))
        return memo.get(key)
      }
    }
  }
  if (features.has('append')) {
    let append
    proto.appendMessage = async function (m) {
      if (!append) {
        const next = parleyDb.prepare(
          'update conversations set last_seq = last_seq + 1, last_at = case when last_at >= ? then last_at + 1 else ? end, updated_at = ? where integration_id = ? and id = ? returning last_seq, last_at',
        )
        const insert = parleyDb.prepare(
          'insert into messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        append = parleyDb.transaction((m) => {
          const r = next.get(m.now, m.now, m.now, m.integrationId, m.conversationId)
          if (!r) return undefined
          const { now: _now, botSkip = false, ...fields } = m
          insert.run(m.id, m.integrationId, m.conversationId, r.last_seq, m.userId, m.isBot ? 1 : 0, JSON.stringify(m.payload),
            m.metadata === null ? null : JSON.stringify(m.metadata), botSkip ? 1 : 0, r.last_at)
          return { ...fields, botSkip, seq: Number(r.last_seq), createdAt: Number(r.last_at) }
        })
      }
      return append(m)
    }
  }
}
