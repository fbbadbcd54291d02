// Baseline for `npm run bench -- turns-client`: the least the Chat API's echo turn needs, as the official
// @botpress/chat client speaks it. Bare fastify + better-sqlite3 (bench/lib/baseline-store.mjs: Parley's `messages`
// table, WAL, synchronous=NORMAL, UUIDv7 ids) + a raw SSE response per listener + a plain JS echo.
//
// Serves under /<webhookId>/ (any id): GET hello/, POST users ({ user, key }), POST conversations, GET
// conversations/:id/listen (unnamed `data:` frames, as Parley sends), POST messages (ajv-validated body, one INSERT,
// 201, the message_created signal to the conversation's listeners). After the 201, on the next turn of the event
// loop, the "bot" inserts the echo of the text and sends it as the next signal: no sandbox, no flow state, no claim.
//
// What it deliberately does NOT do (and Parley does): keep users and keys in the database (a Map here), check
// membership, take the seq in a transaction, run the bot in a sandbox, read and write its state, lease the
// conversation, deliver through pub/sub and re-read the log, log requests. Env: PORT, BENCH_DATA_DIR.
import { randomBytes } from 'node:crypto'
import { baselineApp, MessageBody, MessageOut, openBaselineStore, uuidv7 } from './lib/baseline-store.mjs'

const port = Number(process.env.PORT)
if (!port) throw new Error('PORT is required')
const store = openBaselineStore(process.env.BENCH_DATA_DIR || process.cwd())
const app = baselineApp()

/** user key → user; conversation id → its listeners' raw responses. */
const users = new Map()
const listeners = new Map()
const BOT_ID = 'bench-bot'

const userOf = (request, reply) => {
  const user = users.get(request.headers['x-user-key'])
  if (!user) reply.code(401).send({ id: 'err', code: 401, type: 'Unauthorized', message: 'unknown user key' })
  return user
}
function signal(conversationId, type, data) {
  const frame = `data: ${JSON.stringify({ type, data })}\n\n`
  for (const res of listeners.get(conversationId) ?? []) res.write(frame)
}

app.get('/healthz', async () => ({ status: 'ok' }))
app.get('/:webhookId/hello/', async () => ({}))

app.post('/:webhookId/users', async (request, reply) => {
  const now = new Date().toISOString()
  const user = { id: uuidv7(), createdAt: now, updatedAt: now }
  const key = randomBytes(24).toString('base64url')
  users.set(key, user)
  return reply.code(201).send({ user, key })
})

app.post('/:webhookId/conversations', async (request, reply) => {
  const user = userOf(request, reply)
  if (!user) return reply
  const id = uuidv7()
  store.createConversation(id, user.id)
  const now = new Date().toISOString()
  return reply.code(201).send({ conversation: { id, createdAt: now, updatedAt: now } })
})

app.get('/:webhookId/conversations/:id/listen', async (request, reply) => {
  const user = userOf(request, reply)
  if (!user) return reply
  const { id } = request.params
  if (!store.hasConversation(id)) return reply.code(404).send({ id: 'err', code: 404, type: 'ResourceNotFound', message: 'no such conversation' })
  reply.hijack()
  const res = reply.raw
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  res.flushHeaders()
  let set = listeners.get(id)
  if (!set) listeners.set(id, (set = new Set()))
  set.add(res)
  request.raw.on('close', () => set.delete(res))
})

app.post('/:webhookId/messages', {
  schema: { body: MessageBody, response: { 201: { type: 'object', required: ['message'], properties: { message: MessageOut } } } },
}, async (request, reply) => {
  const user = userOf(request, reply)
  if (!user) return reply
  const { conversationId, payload, metadata } = request.body
  const message = store.insertMessage({ conversationId, userId: user.id, payload, metadata })
  if (!message) return reply.code(404).send({ id: 'err', code: 404, type: 'ResourceNotFound', message: 'no such conversation' })
  signal(conversationId, 'message_created', message)
  // The bot: the echo of the text, after the answer (as a bot turn follows the 201).
  setImmediate(() => {
    const echo = store.insertMessage({ conversationId, userId: BOT_ID, isBot: true, payload: { type: 'text', text: payload.text } })
    signal(conversationId, 'message_created', echo)
  })
  return reply.code(201).send({ message })
})

await app.listen({ port, host: '127.0.0.1' })
process.stdout.write(`turn baseline listening on ${port}\n`)
const stop = async () => {
  for (const set of listeners.values()) for (const res of set) res.end()
  await app.close()
  store.close()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
