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
import { baselineApp, MessageBody, MessageOut, openBaselineStore } from './lib/baseline-store.mjs'

const port = Number(process.env.PORT)
const dataDir = process.env.BENCH_DATA_DIR || process.cwd()
if (!port) throw new Error('PORT is required')
const store = openBaselineStore(dataDir)

// ---- HTTP ----
const app = baselineApp()

app.get('/healthz', {
  schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } } },
}, async () => ({ status: 'ok' }))

app.post('/conversations', {
  schema: { body: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } },
}, async (request, reply) => {
  store.createConversation(request.body.id, 'bench-user')
  return reply.code(201).send({ conversation: { id: request.body.id } })
})

app.post('/messages', {
  schema: {
    body: MessageBody,
    response: { 201: { type: 'object', required: ['message'], properties: { message: MessageOut } } },
  },
}, async (request, reply) => {
  const { conversationId, payload, metadata } = request.body
  const message = store.insertMessage({ conversationId, userId: 'bench-user', payload, metadata })
  if (!message) return reply.code(404).send({ message: 'no such conversation' })
  return reply.code(201).send({ message })
})

await app.listen({ port, host: '127.0.0.1' })
process.stdout.write(`baseline listening on ${port}\n`)

const stop = async () => {
  await app.close()
  store.close()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
