/**
 * Property-based fuzzing of every operation of `/openapi.json` (issue #13), over real HTTP, on the
 * harness's backend (the sqlite and postgres projects each run it).
 *
 * For each operation, fast-check generates requests: path parameters (valid ids of this tenant and
 * another, huge, unicode, `..`, `%00`, encoded slashes), query strings (repeated and dotted keys,
 * `__proto__`, huge numbers), headers (valid credentials mostly, so requests reach the handlers,
 * domain and store; another tenant's, garbage or none otherwise; odd content types) and bodies
 * derived from the operation's schema with mutations (wrong types, extra keys, deep nesting, huge
 * strings, NUL, lone surrogates, 1e400, -0, truncated or non-UTF-8 text).
 *
 * Ids, page tokens, upload and download URLs from earlier 2xx answers feed later requests, so the
 * run goes past "not found" into resources it created. Destructive operations (deletes, updateBot,
 * updateWorkspaceMember) only ever get throwaway resources, never the fixtures.
 *
 * Properties, per response: status < 500; a 4xx has the Botpress error body `{id, code, type,
 * message}` with code = status and a known type of that status. After each operation's run the
 * server still answers /healthz and the fixtures (main user, main bot) still work. Two more
 * properties send requests concurrently: one request several times, and a mix of operations on the
 * same throwaway resources.
 *
 * Runs: PARLEY_FUZZ_RUNS per operation (default 100: about a minute per backend); a failure prints a
 * replay command (PARLEY_FUZZ_OPS, PARLEY_FUZZ_SEED, PARLEY_FUZZ_PATH); PARLEY_FUZZ_OPS=opA,opB
 * (or concurrent, concurrent-mix) runs only those; PARLEY_FUZZ_SHRINK=1 shrinks a counterexample.
 *   PARLEY_FUZZ_RUNS=2000 npx vitest run --project sqlite test/fuzz     (or: npm run fuzz)
 */
import { createHmac, randomUUID } from 'node:crypto'
import http from 'node:http'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_STATUS, PROTOCOL_ERROR_TYPES } from '../../src/lib/errors.js'
import { hashSecret } from '../../src/lib/crypto.js'
import { randomSecret, uuidv7 } from '../../src/lib/ids.js'
import { startParley } from '../helpers/harness.js'
import { bodyFor, hostileHeaderValue, learnedId, pathSegment, queryFor, type BodySpec, type QueryParam, type Schema } from './generators.js'

const env = process.env
const RUNS = Math.max(1, Number(env.PARLEY_FUZZ_RUNS ?? 100))
const SEED = env.PARLEY_FUZZ_SEED === undefined ? undefined : Number(env.PARLEY_FUZZ_SEED)
const PATH = env.PARLEY_FUZZ_PATH
const ONLY = env.PARLEY_FUZZ_OPS?.split(',').map((s) => s.trim()).filter(Boolean)
/** A request that gets no answer at all in this long is a failure (a hang), not a timing assertion. */
const NO_ANSWER_MS = 30_000

// ---------------------------------------------------------------------------------------------
// The server and its OpenAPI document

const h = await startParley({ listen: true })
afterAll(async () => h.close())

interface OpenApiOperation {
  operationId?: string
  parameters?: { in: string; name: string; required?: boolean; schema: Schema }[]
  requestBody?: { content: Record<string, { schema: Schema }> }
}
interface Operation {
  id: string
  method: string
  /** Path template, `{name}` placeholders. */
  path: string
  pathParams: string[]
  query: QueryParam[]
  headerParams: string[]
  body: Schema | undefined
}

const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, OpenApiOperation>> }
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({
    id: op.operationId ?? `${method} ${path}`,
    method: method.toUpperCase(),
    path,
    pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
    query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema, required: p.required === true })),
    headerParams: (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name),
    body: op.requestBody?.content['application/json']?.schema,
  })),
)

// ---------------------------------------------------------------------------------------------
// HTTP

interface Req {
  method: string
  path: string
  headers: Record<string, string | string[]>
  body: BodySpec
}
interface Res {
  status: number
  text: string
  contentType: string | undefined
}

/**
 * Ids and page tokens from 2xx responses (learnedId / learnedToken placeholders resolve to them), minus
 * the fixtures', so destructive operations never get those.
 */
const learned = { ids: [] as string[], tokens: [] as string[], uploads: [] as string[], downloads: [] as string[], protected: new Set<string>() }
const LEARNED_MAX = 500

function learn(value: unknown, key = ''): void {
  if (typeof value === 'string') {
    if (key === 'nextToken') learned.tokens.push(value)
    else if (key === 'uploadUrl' && value.includes('/v1/files/uploads/')) learned.uploads.push(value.split('/v1/files/uploads/')[1]!)
    else if (key === 'url' && value.includes('/v1/files/content/') && !learned.protected.has(value)) learned.downloads.push(value.slice(value.indexOf('/v1/files/content/')))
    else if (/(^id$|Id$|^key$)/.test(key) && !learned.protected.has(value)) learned.ids.push(value)
  } else if (Array.isArray(value)) value.forEach((v) => learn(v, key))
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) learn(v, k)
  for (const list of [learned.ids, learned.tokens, learned.uploads, learned.downloads]) if (list.length > LEARNED_MAX) list.splice(0, list.length - LEARNED_MAX)
}

const PLACEHOLDER = /~~([LNUD])(\d+)~~/g
function resolve(text: string, encode: (s: string) => string): string {
  return text.replace(PLACEHOLDER, (_, kind: string, n: string) => {
    const list = { L: learned.ids, N: learned.tokens, U: learned.uploads, D: learned.downloads }[kind]!
    // A download (D) is a whole path and query, already encoded.
    if (list.length === 0) return kind === 'D' ? '/v1/files/content/none/none' : 'none'
    return kind === 'D' ? list[Number(n) % list.length]! : encode(list[Number(n) % list.length]!)
  })
}

/** The request with learned values in place of placeholders. */
function resolveRequest(req: Req): Req {
  const body = req.body.bytes && req.body.bytes.includes('~~') ? { ...req.body, bytes: Buffer.from(resolve(req.body.bytes.toString('utf8'), (s) => JSON.stringify(s).slice(1, -1))) } : req.body
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => resolve(x, (s) => s)) : resolve(v, (s) => s)]))
  return { method: req.method, path: resolve(req.path, encodeURIComponent), headers, body }
}

function send(original: Req): Promise<Res> {
  const req = resolveRequest(original)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...req.headers }
    if (req.body.contentType !== null) headers['content-type'] = req.body.contentType
    if (req.body.bytes !== undefined) headers['content-length'] = String(req.body.bytes.length)
    let answered = false
    const r = http.request(`${h.baseUrl}${req.path}`, { method: req.method, headers, agent: false }, (res) => {
      answered = true
      const contentType = res.headers['content-type']
      const status = res.statusCode ?? 0
      if (contentType?.startsWith('text/event-stream') || (status < 300 && req.path.includes('/v1/files/content/'))) {
        // A stream (listenConversation) or file bytes: the status is what matters.
        res.destroy()
        r.destroy()
        return resolve({ status, text: '', contentType })
      }
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        if (status < 300 && contentType?.startsWith('application/json')) {
          try {
            learn(JSON.parse(text))
          } catch {
            // not JSON after all: nothing to learn
          }
        }
        resolve({ status, text, contentType })
      })
      res.on('error', reject)
    })
    r.setTimeout(NO_ANSWER_MS, () => r.destroy(new Error(`no answer within ${NO_ANSWER_MS} ms`)))
    r.on('error', (err) => {
      if (!answered) reject(err)
    })
    r.end(req.body.bytes)
  })
}

const TYPES_BY_STATUS = new Map<number, Set<string>>()
for (const [type, status] of Object.entries(ERROR_STATUS)) TYPES_BY_STATUS.set(status, (TYPES_BY_STATUS.get(status) ?? new Set()).add(type))
// Answers below the router (431 from Node's parser, 408) carry the nearest Botpress type.
for (const [status, type] of Object.entries(PROTOCOL_ERROR_TYPES)) TYPES_BY_STATUS.set(Number(status), (TYPES_BY_STATUS.get(Number(status)) ?? new Set()).add(type))

/** What is wrong with a response, or undefined. */
function problemOf(req: Req, res: Res): string | undefined {
  if (res.status >= 500) return `5xx: ${res.status} ${res.text.slice(0, 300)}`
  if (res.status < 400 || req.method === 'HEAD') return undefined
  let body: Record<string, unknown>
  try {
    body = JSON.parse(res.text) as Record<string, unknown>
  } catch {
    return `${res.status} without a JSON body: ${JSON.stringify(res.text.slice(0, 200))}`
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return `${res.status} body is not an object: ${res.text.slice(0, 200)}`
  if (typeof body.id !== 'string' || body.id === '') return `${res.status} body without id: ${res.text.slice(0, 200)}`
  if (body.code !== res.status) return `${res.status} body with code ${String(body.code)}`
  if (typeof body.type !== 'string' || !TYPES_BY_STATUS.get(res.status)?.has(body.type)) return `${res.status} body with type ${String(body.type)}`
  if (typeof body.message !== 'string') return `${res.status} body without message`
  const extra = Object.keys(body).filter((k) => !['id', 'code', 'type', 'message', 'metadata'].includes(k))
  if (extra.length > 0) return `${res.status} body with extra keys ${extra.join(', ')}`
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Fixtures: two tenants, and throwaway resources for destructive operations

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : {}
}

function jwt(claims: Record<string, unknown>, secret: string, alg = 'HS256'): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const head = `${part({ alg, typ: 'JWT' })}.${part(claims)}`
  return alg === 'none' ? `${head}.` : `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`
}

interface Tenant {
  token: string
  workspaceId: string
  accountId: string
  botId: string
  botKey: string
  bakId: string
  patId: string
  webhookId: string
  encryptionKey: string
  hookId: string
  userKey: string
  userId: string
  otherUserId: string
  conversationId: string
  messageId: string
  eventId: string
  fileId: string
  fileKey: string
  fileUrl: string
  uploadToken: string
  kbId: string
}

async function tenant(token: string, workspaceId: string, accountId: string): Promise<Tenant> {
  const admin = { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId }
  const { bot } = await call('POST', '/v1/admin/bots', admin, { name: 'fuzz bot', integrations: { chat: { enabled: true }, webhook: { enabled: true } } })
  const chatIntegration = bot.integrations.chat
  const hook = bot.integrations.webhook
  const bak = await call('POST', '/v1/admin/bots/baks', admin, { botId: bot.id, note: 'fuzz' })
  const { pat } = await call('POST', '/v1/admin/account/pats', admin, { note: 'fuzz' })
  const chat = `/${chatIntegration.webhookId}`
  const { user, key } = await call('POST', `${chat}/users`, {}, { name: 'fuzz' })
  const other = await call('POST', `${chat}/users`, {}, {})
  const ukey = { 'x-user-key': key }
  const { conversation } = await call('POST', `${chat}/conversations`, ukey, {})
  await call('POST', `${chat}/conversations/${conversation.id}/participants`, ukey, { userId: other.user.id })
  const { message } = await call('POST', `${chat}/messages`, ukey, { conversationId: conversation.id, payload: { type: 'text', text: 'hello' } })
  const { event } = await call('POST', `${chat}/events`, ukey, { conversationId: conversation.id, payload: { a: 1 } })
  const files = { authorization: `Bearer ${token}`, 'x-bot-id': bot.id }
  const fileKey = `fuzz-${randomUUID().slice(0, 8)}.txt`
  const { file } = await call('PUT', '/v1/files', files, { key: fileKey, size: 5, tags: { env: 'fuzz' } })
  const up = await fetch(file.uploadUrl, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } })
  if (up.status !== 200) throw new Error(`fixture upload: ${up.status}`)
  const { file: landed } = await call('GET', `/v1/files/${file.id}`, files)
  const { knowledgeBase } = await call('POST', '/v1/files/knowledge-bases', files, { name: 'fuzz kb' })
  return {
    token, workspaceId, accountId, botId: bot.id, botKey: bak.value, bakId: bak.id, patId: pat.id,
    webhookId: chatIntegration.webhookId, encryptionKey: chatIntegration.configuration.encryptionKey, hookId: hook.webhookId,
    userKey: key, userId: user.id, otherUserId: other.user.id, conversationId: conversation.id, messageId: message.id, eventId: event.id,
    fileId: file.id, fileKey, fileUrl: new URL(landed.url).pathname + new URL(landed.url).search,
    uploadToken: new URL(file.uploadUrl).pathname.split('/').pop()!, kbId: knowledgeBase.id,
  }
}

/** Another tenant, made as the first start makes one: its own account, workspace and token. */
async function otherTenant(): Promise<Tenant> {
  const now = Date.now()
  const workspaceId = uuidv7()
  const accountId = uuidv7()
  await h.store.createWorkspace({ id: workspaceId, name: 'Other', createdAt: now, updatedAt: now })
  await h.store.createAccount({ id: accountId, email: 'other@fuzz.test', displayName: 'Other', createdAt: now, updatedAt: now })
  await h.store.addWorkspaceMember(workspaceId, accountId, 'owner', now)
  const token = randomSecret('pat')
  await h.store.createAccessToken({ id: uuidv7(), accountId, tokenHash: hashSecret(token), note: 'fuzz', createdAt: now })
  return tenant(token, workspaceId, accountId)
}

/** Resources a destructive operation may delete or change (never the fixtures the other operations need). */
interface Victims {
  botId: string
  webhookId: string
  workspaceId: string
  patId: string
  memberId: string
  bakId: string
  userKey: string
  userId: string
  participantId: string
  conversationId: string
  messageId: string
  fileId: string
  fileKey: string
  kbId: string
}

async function victims(main: Tenant): Promise<Victims> {
  const admin = { authorization: `Bearer ${main.token}`, 'x-workspace-id': main.workspaceId }
  const { bot } = await call('POST', '/v1/admin/bots', admin, { name: 'victim', integrations: { chat: { enabled: true } } })
  const workspace = await call('POST', '/v1/admin/workspaces', admin, { name: 'victim' })
  const { pat } = await call('POST', '/v1/admin/account/pats', admin, { note: 'victim' })
  const member = await call('POST', '/v1/admin/workspace-members', admin, { email: `victim-${randomUUID().slice(0, 8)}@fuzz.test`, role: 'developer' })
  const bak = await call('POST', '/v1/admin/bots/baks', admin, { botId: main.botId, note: 'victim' })
  const chat = `/${main.webhookId}`
  const { user, key } = await call('POST', `${chat}/users`, {}, {})
  const participant = await call('POST', `${chat}/users`, {}, {})
  const ukey = { 'x-user-key': key }
  const { conversation } = await call('POST', `${chat}/conversations`, ukey, {})
  await call('POST', `${chat}/conversations/${conversation.id}/participants`, ukey, { userId: participant.user.id })
  await call('POST', `${chat}/conversations/${conversation.id}/participants`, ukey, { userId: main.userId })
  const { message } = await call('POST', `${chat}/messages`, { 'x-user-key': main.userKey }, { conversationId: main.conversationId, payload: { type: 'text', text: 'victim' } })
  const files = { authorization: `Bearer ${main.token}`, 'x-bot-id': main.botId }
  const fileKey = `victim-${randomUUID().slice(0, 8)}.txt`
  const { file } = await call('PUT', '/v1/files', files, { key: fileKey, size: 1 })
  const { knowledgeBase } = await call('POST', '/v1/files/knowledge-bases', files, { name: 'victim kb' })
  return {
    botId: bot.id, webhookId: bot.integrations.chat.webhookId, workspaceId: workspace.id, patId: pat.id, memberId: member.id, bakId: bak.id,
    userKey: key, userId: user.id, participantId: participant.user.id, conversationId: conversation.id, messageId: message.id,
    fileId: file.id, fileKey, kbId: knowledgeBase.id,
  }
}

/** Operations that delete or disable what they name: they get throwaway resources, never the fixtures. */
const DESTRUCTIVE = new Set(['updateBot', 'updateWorkspaceMember'])
const isDestructive = (op: Operation) => op.method === 'DELETE' || DESTRUCTIVE.has(op.id)

// ---------------------------------------------------------------------------------------------
// Request generation

type Weighted<T> = { arbitrary: fc.Arbitrary<T>; weight: number }
const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>): Weighted<T> => ({ arbitrary, weight })
const one = <T>(...values: T[]): fc.Arbitrary<T> => fc.constantFrom(...values)

interface World {
  main: Tenant
  other: Tenant
  /** Present for destructive operations. */
  victims: Victims[] | undefined
}

/** Ids worth trying in a path parameter or an id-like body field of this operation. */
/** The kind of resource a path parameter names: the path segment before it (`/bots/{id}` → bots). */
function kindOf(op: Operation, param: string | undefined): string {
  if (param === undefined) return 'body'
  const segments = op.path.split('/')
  const at = segments.indexOf(`{${param}}`)
  return at > 0 ? segments[at - 1]! : 'body'
}

/** Ids worth trying in a path parameter (or an id-like body field) of this operation: the right kind mostly. */
function knownIds(op: Operation, world: World, param?: string): fc.Arbitrary<string> {
  const { main, other } = world
  const v = world.victims
  const pick = <K extends keyof Victims>(k: K) => (v ? v.map((x) => x[k]) : [])
  const kind = kindOf(op, param)
  // [ids of the right kind, of this tenant (or throwaway ones for destructive operations)] and [other ids].
  const right: Record<string, string[]> = v
    ? {
        pats: pick('patId'), workspaces: pick('workspaceId'), 'workspace-members': pick('memberId'), bots: pick('botId'), baks: pick('bakId'),
        files: [...pick('fileId'), ...pick('fileKey')], 'knowledge-bases': pick('kbId'), conversations: pick('conversationId'),
        participants: pick('participantId'), messages: pick('messageId'), events: [],
      }
    : {
        pats: [main.patId], workspaces: [main.workspaceId], 'workspace-members': [main.accountId], bots: [main.botId], baks: [main.bakId],
        files: [main.fileId, main.fileKey], 'knowledge-bases': [main.kbId], conversations: [main.conversationId],
        participants: [main.userId, main.otherUserId], messages: [main.messageId], events: [main.eventId], tags: ['env'],
      }
  if (kind === 'tags') return fc.oneof(w(4, one('env', 'missing')), w(1, learnedId))
  // Not the main file's key: copyFile with overwrite would replace the fixture.
  if (param === 'destinationKey') return fc.oneof(w(3, fc.uuid().map((u) => `copy-${u.slice(0, 8)}.txt`)), w(1, one('copy.txt', 'a/../b', 'search', 'tags')), w(1, learnedId))
  if (param === 'idOrKey') return fc.oneof(w(6, one(...(v ? [...pick('fileId'), ...pick('fileKey')] : [main.fileId, main.fileKey]))), w(2, learnedId), w(1, one(other.fileId, other.fileKey)))
  const good = right[kind] ?? Object.values(right).flat()
  const others = [other.botId, other.workspaceId, other.accountId, other.conversationId, other.messageId, other.eventId, other.fileId, other.fileKey, other.kbId, other.userId, ...Object.values(right).flat()]
  // Learned ids: what the server returned earlier in the run (files, conversations, bots… created by fuzzed requests).
  return fc.oneof(
    ...(good.length > 0 ? [w(8, one(...good))] : []),
    w(2, one(...others)),
    w(3, learnedId),
    w(1, one(uuidv7(), 'me', 'get-or-create', 'listen', randomUUID())),
  )
}

function paramSegment(op: Operation, world: World, name: string): fc.Arbitrary<string> {
  const { main, other } = world
  if (name === 'webhookId' && op.path.startsWith('/webhooks/')) return pathSegment(fc.oneof(w(8, one(main.hookId)), w(1, one(other.hookId, main.webhookId))))
  if (name === 'webhookId') {
    const victimHooks = world.victims?.map((v) => v.webhookId) ?? []
    return fc.oneof(w(12, one(main.webhookId)), w(1, pathSegment(one(other.webhookId, main.hookId, ...victimHooks))))
  }
  if (name === 'token') return fc.oneof(w(3, one(main.uploadToken)), w(3, fc.nat(10_000).map((n) => `~~U${n}~~`)), w(1, pathSegment(one(other.uploadToken, main.uploadToken.slice(0, -1) + 'A'))))
  if (name === 'botId' && op.id === 'getFileContent') return pathSegment(one(main.botId, other.botId))
  if (name === 'fileId' && op.id === 'getFileContent') return pathSegment(one(main.fileId, other.fileId))
  return pathSegment(knownIds(op, world, name))
}

const withWeights = <T>(entries: [number, T][]) => fc.oneof(...entries.map(([weight, value]) => w(weight, fc.constant(value))))
const garbageToken = one('pat_forged00000000000000000000000000000000', 'bak_forged', 'Bearer', '', 'x'.repeat(5000))

function authHeaders(op: Operation, world: World): fc.Arbitrary<Record<string, string | string[]>> {
  const { main, other } = world
  const v = world.victims
  const entry = (name: string, value: fc.Arbitrary<string | string[] | undefined>) => value.map((x) => (x === undefined ? {} : { [name]: x }))
  const merge = (...parts: fc.Arbitrary<Record<string, string | string[]>>[]) => fc.tuple(...parts).map((ps) => Object.assign({}, ...ps) as Record<string, string | string[]>)
  const bearer = (extra: string[] = []) =>
    fc.oneof(
      w(40, one(`Bearer ${main.token}`)),
      w(3, one(`Bearer ${main.botKey}`, `Bearer ${other.token}`, `bearer ${main.token}`, ...extra)),
      w(1, garbageToken.map((t) => `Bearer ${t}`)),
      w(1, one<string | string[] | undefined>(undefined, [`Bearer ${main.token}`, `Bearer ${other.token}`], main.token, `Basic ${Buffer.from(`x:${main.token}`).toString('base64')}`)),
      w(1, hostileHeaderValue),
    )
  const id = (good: string, alternatives: string[]) => fc.oneof(w(40, one<string | undefined>(good)), w(2, one<string | undefined>(...alternatives, undefined)), w(1, hostileHeaderValue))
  if (op.path.startsWith('/v1/admin')) {
    return merge(entry('authorization', bearer()), entry('x-workspace-id', id(main.workspaceId, [other.workspaceId, ...(v?.map((x) => x.workspaceId) ?? [])])))
  }
  if (op.id === 'uploadFileContent' || op.id === 'getFileContent') {
    return fc.oneof(w(4, fc.constant({})), w(1, merge(entry('authorization', bearer()), entry('x-bot-id', id(main.botId, [other.botId])))))
  }
  if (op.path.startsWith('/v1/files')) {
    const parts = [entry('authorization', bearer()), entry('x-bot-id', id(main.botId, [other.botId, ...(v?.map((x) => x.botId) ?? [])]))]
    if (op.headerParams.includes('x-destination-bot-id')) parts.push(entry('x-destination-bot-id', fc.oneof(w(2, one<string | undefined>(undefined)), w(2, one<string | undefined>(main.botId, other.botId, world.other.botId)), w(1, hostileHeaderValue))))
    return merge(...parts)
  }
  if (op.path.startsWith('/webhooks/')) {
    return merge(
      entry('x-parley-signature', fc.oneof(w(4, one<string | undefined>(undefined)), w(1, one(`t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`, 't=x,v1=y', 't=1e400,v1=', 'v1=,v1=,v1=')), w(1, hostileHeaderValue))),
      entry('idempotency-key', fc.oneof(w(3, one<string | undefined>(undefined)), w(1, fc.string({ maxLength: 10 })), w(1, hostileHeaderValue))),
    )
  }
  if (op.pathParams.includes('webhookId')) {
    if (op.id === 'createUser' || op.id === 'hello') return fc.oneof(w(4, fc.constant({})), w(1, entry('x-user-key', one(main.userKey, other.userKey, 'garbage'))))
    // deleteUser acts on the caller: it gets throwaway users' keys instead of the main user's.
    const good = op.id === 'deleteUser' && v ? v.map((x) => x.userKey) : v ? v.map((x) => x.userKey).concat(main.userKey) : [main.userKey]
    const self = op.id === 'deleteUser' && v ? v[0]!.userId : main.userId
    const key = fc.oneof(
      w(40, one<string | string[] | undefined>(...good)),
      w(2, one<string | string[] | undefined>(other.userKey, jwt({ id: self }, main.encryptionKey), jwt({ id: 'fuzz-jwt-user' }, main.encryptionKey), jwt({ id: self }, other.encryptionKey), jwt({ id: self }, '', 'none'))),
      w(1, fc.string({ maxLength: 40 }).map((s) => jwt({ id: s }, main.encryptionKey))),
      w(1, fc.jsonValue({ maxDepth: 1 }).map((claim) => jwt({ id: claim, exp: 'soon', nbf: 1e300 }, main.encryptionKey))),
      w(1, one<string | string[] | undefined>(undefined, '', [main.userKey, other.userKey], 'eyJ.eyJ.x', 'x'.repeat(5000))),
      w(1, hostileHeaderValue),
    )
    const extra = op.headerParams.includes('last-event-id') ? [entry('last-event-id', fc.oneof(one<string | undefined>(undefined, main.messageId, '0', ''), hostileHeaderValue))] : []
    return merge(entry('x-user-key', key), ...extra)
  }
  return fc.constant({})
}

/** Other headers: odd encodings and duplicates that reach nothing in particular. */
const extraHeaders: fc.Arbitrary<Record<string, string | string[]>> = fc.oneof(
  w(6, fc.constant({})),
  w(1, hostileHeaderValue.map((value) => ({ 'x-integration-id': value }))),
  w(1, one<Record<string, string>>({ 'content-encoding': 'gzip' }, { 'content-encoding': 'br, identity' }, { accept: 'text/html' }, { 'accept-charset': 'latin1' }, { origin: 'null' }, { 'x-forwarded-for': '::1, 127.0.0.1, x' })),
)

/** File content for uploads, in the formats the indexer extracts (and broken ones). */
const documentBody: fc.Arbitrary<BodySpec> = fc
  .tuple(
    fc.constantFrom(
      '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF', '%PDF-', '%PDF-1.7\n' + 'x'.repeat(5000), '<html><script>x</script><h1>T</h1><p>a<b>b</p>', '<', '<!--',
      'a,b\n"1,"2\n""",\n', '\ufeffa;b\tc\n1', '{"a":{"b":[1,{"c":"d"}]}}', '[' + '['.repeat(500) + ']'.repeat(500) + ']', '# T\n## U\n' + 'word '.repeat(3000), '\u0000\u0001\u0002', '',
    ),
    fc.constantFrom('text/plain', 'application/pdf', 'text/html', 'text/csv', 'text/tab-separated-values', 'application/json', 'text/markdown', 'application/octet-stream', 'image/png'),
  )
  .map(([text, contentType]) => ({ bytes: Buffer.from(text), contentType, label: `document ${contentType}` }))

function requestFor(op: Operation, world: World): fc.Arbitrary<Req> {
  const segments = op.pathParams.map((p) => paramSegment(op, world, p))
  let path = fc.tuple(...segments).map((values) => {
    let i = 0
    return op.path.replace(/\{\w+\}/g, () => values[i++]!)
  })
  // Downloads of files the run created (hostile keys and content types included), by their signed URL.
  if (op.id === 'getFileContent') path = fc.oneof(w(1, path), w(1, fc.nat(10_000).map((n) => `~~D${n}~~`)))
  const ctx = { ids: knownIds(op, world) }
  let query = queryFor(op.query, ctx)
  if (op.id === 'getFileContent') {
    const real = world.main.fileUrl.split('?')[1] ?? ''
    query = fc.oneof(w(3, fc.constant(real)), w(1, query), w(1, fc.tuple(query).map(([q]) => `${real}&${q}`)))
  }
  const takesBody = op.body !== undefined || op.method === 'PUT' || op.method === 'POST'
  const body = takesBody
    ? op.id === 'uploadFileContent'
      ? fc.oneof(w(3, one<BodySpec>({ bytes: Buffer.from('hello'), contentType: 'text/plain', label: '5 bytes' })), w(3, documentBody), w(2, bodyFor(undefined, ctx)))
      : bodyFor(op.body, ctx)
    : fc.oneof(w(8, fc.constant<BodySpec>({ bytes: undefined, contentType: null, label: 'no body' })), w(1, bodyFor(undefined, ctx)))
  // Other methods on the same path: only ones that cannot reach another operation that deletes or
  // disables a fixture (DELETE /users/me, PUT /bots/{id}…).
  const method = fc.oneof(w(30, fc.constant(op.method)), w(1, one('PATCH', 'OPTIONS', 'HEAD', 'GET', 'TRACE', 'PROPFIND')))
  return fc
    .record({ method, path, query, auth: authHeaders(op, world), extra: extraHeaders, body })
    .map((r): Req => {
      const req: Req = { method: r.method, path: r.path.startsWith('~~D') ? r.path : r.query === '' ? r.path : `${r.path}?${r.query}`, headers: { ...r.extra, ...r.auth }, body: r.body }
      // fast-check prints counterexamples with this: short, not megabytes.
      Object.defineProperty(req, fc.toStringMethod, { value: () => describeReq(req), enumerable: false })
      return req
    })
}

/** Short text of a request for failure messages. */
function describeReq(req: Req): string {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v).slice(0, 120)]))
  return `${req.method} ${req.path.slice(0, 400)} headers=${JSON.stringify(headers)} body(${req.body.label}, ${req.body.contentType})=${req.body.bytes?.subarray(0, 400).toString('utf8') ?? '<none>'}`
}

// ---------------------------------------------------------------------------------------------
// The properties

let world: World

beforeAll(async () => {
  const main = await tenant(h.credentials.token, h.credentials.workspaceId, (await call('GET', '/v1/admin/account/me', { authorization: `Bearer ${h.credentials.token}` })).account.id)
  world = { main, other: await otherTenant(), victims: undefined }
  for (const t of [world.main, world.other]) {
    for (const v of Object.values(t)) learned.protected.add(v)
    // Every id that exists now (the first start's access token, memberships…) is a fixture too.
    const admin = { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId }
    const files = { authorization: `Bearer ${t.token}`, 'x-bot-id': t.botId }
    const lists = await Promise.all([
      call('GET', '/v1/admin/account/pats', admin), call('GET', '/v1/admin/workspaces', admin), call('GET', '/v1/admin/workspace-members', admin),
      call('GET', '/v1/admin/bots', admin), call('GET', `/v1/admin/bots/baks?botId=${t.botId}`, admin), call('GET', '/v1/files', files),
      call('GET', '/v1/files/knowledge-bases', files), call('GET', `/${t.webhookId}/conversations`, { 'x-user-key': t.userKey }),
    ])
    const protect = (value: unknown): void => {
      if (typeof value === 'string') learned.protected.add(value)
      else if (value !== null && typeof value === 'object') Object.values(value).forEach(protect)
    }
    protect(lists)
  }
}, 60_000)

/** Sends a request and throws what is wrong with the response (a 5xx, a malformed error body, no answer). */
async function sendChecked(req: Req): Promise<Res> {
  let res: Res
  try {
    res = await send(req)
  } catch (err) {
    throw new Error(`no response (${(err as Error).message}) to ${describeReq(req)}`)
  }
  const problem = problemOf(req, res)
  if (problem) throw new Error(`${problem}\n  request: ${describeReq(req)}`)
  return res
}

/** fc.check with the suite's seed, path and shrink settings; a failure reports its cause and a replay command. */
async function checkProperty<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, runs = RUNS): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), {
    numRuns: runs, ...(SEED !== undefined && { seed: SEED }), ...(PATH !== undefined && { path: PATH }), endOnFailure: env.PARLEY_FUZZ_SHRINK !== '1',
  })
  if (details.failed) {
    const replay = `PARLEY_FUZZ_OPS=${name} PARLEY_FUZZ_SEED=${details.seed} PARLEY_FUZZ_PATH=${details.counterexamplePath ?? ''} npx vitest run --project ${h.storeKind} test/fuzz`
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    throw new Error(`${fc.defaultReportMessage(details)}\nGot: ${cause}\nReplay: ${replay}`)
  }
}

async function stillServing(): Promise<void> {
  const health = await fetch(`${h.baseUrl}/healthz`)
  expect(health.status, 'the server answers /healthz after the run').toBe(200)
  const me = await fetch(`${h.baseUrl}/${world.main.webhookId}/users/me`, { headers: { 'x-user-key': world.main.userKey } })
  expect(me.status, 'the main user still works (fixtures intact, so later operations reach their handlers)').toBe(200)
  const bot = await fetch(`${h.baseUrl}/v1/admin/bots/${world.main.botId}`, { headers: { authorization: `Bearer ${world.main.token}`, 'x-workspace-id': world.main.workspaceId } })
  expect(bot.status, 'the main bot still works').toBe(200)
}

describe(`fuzz: every operation of /openapi.json (${h.storeKind}, ${RUNS} runs each)`, () => {
  it('the document lists the Chat, Admin, Files and webhook operations', () => {
    expect(operations.length).toBeGreaterThanOrEqual(60)
    for (const id of ['createMessage', 'updateBot', 'upsertFile', 'copyFile', 'receiveWebhook', 'listenConversation']) expect(operations.map((o) => o.id)).toContain(id)
  })

  for (const op of operations) {
    const skip = ONLY !== undefined && !ONLY.includes(op.id)
    it.skipIf(skip)(`${op.id}: ${op.method} ${op.path}`, async () => {
      const opWorld: World = { ...world, victims: isDestructive(op) ? await Promise.all([victims(world.main), victims(world.main)]) : undefined }
      const counts = new Map<number, number>()
      await checkProperty(op.id, requestFor(op, opWorld), async (req) => {
        const res = await sendChecked(req)
        counts.set(res.status, (counts.get(res.status) ?? 0) + 1)
      })
      if (env.PARLEY_FUZZ_STATS === '1') console.log(`${op.id}: ${[...counts].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`)
      await stillServing()
    }, Math.max(60_000, RUNS * 2_000))
  }

  // Races: one generated request sent 2–6 times at once (get-or-create of one id, deletes of one
  // resource, copies onto one key…): each answer must still be a 2xx or a well-formed 4xx.
  it.skipIf(ONLY !== undefined && !ONLY.includes('concurrent'))('concurrent: the same request several times at once, for every operation', async () => {
    const throwaway = await Promise.all([victims(world.main), victims(world.main), victims(world.main)])
    const arbitrary = fc.constantFrom(...operations).chain((op) =>
      fc.tuple(fc.constant(op.id), requestFor(op, { ...world, victims: isDestructive(op) ? throwaway : undefined }), fc.integer({ min: 2, max: 6 })),
    )
    await checkProperty('concurrent', arbitrary, async ([, req, copies]) => {
      await Promise.all(Array.from({ length: copies }, () => sendChecked(req)))
    }, RUNS * 3)
    await stillServing()
  }, Math.max(120_000, RUNS * 6_000))

  // Races between different operations on the same resources: 2–6 requests of any operations, all
  // naming one set of throwaway resources (a delete of a conversation while a message is posted to
  // it, a file copied while deleted…), sent at once. Fresh resources every 25 runs.
  it.skipIf(ONLY !== undefined && !ONLY.includes('concurrent-mix'))('concurrent mix: different operations on the same resources at once', async () => {
    const rounds = Math.max(1, Math.ceil((RUNS * 2) / 25))
    for (let round = 0; round < rounds; round++) {
      const throwaway = await Promise.all([victims(world.main), victims(world.main)])
      const mixWorld: World = { ...world, victims: throwaway }
      const arbitrary = fc.array(fc.constantFrom(...operations).chain((op) => requestFor(op, mixWorld)), { minLength: 2, maxLength: 6 })
      await checkProperty('concurrent-mix', arbitrary, async (requests) => {
        await Promise.all(requests.map((req) => sendChecked(req)))
      }, 25)
    }
    await stillServing()
  }, Math.max(120_000, RUNS * 6_000))
})
