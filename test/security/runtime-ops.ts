/**
 * The Runtime API operations the security matrix (runtime.security.test.ts) runs, one row each.
 * To add operations: append rows to RUNTIME_OPS (or push your own array into it) — each row says
 * how to call the operation on a set of resource ids (`RuntimeIds`), whether it writes, and whether
 * it names a resource (then another bot's or workspace's ids must give 404).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { uuidv7 } from '../../src/lib/ids.js'
import type { Harness } from '../helpers/harness.js'
import type { BotRow } from '../../src/store/store.js'
import { integrationScope } from '../../src/domain/bot-chat-service.js'

/** Resources of one bot, created fresh for a row that needs them (deletes consume theirs). */
export interface RuntimeIds {
  botId: string
  conversationId: string
  userId: string
  messageId: string
  /** A workflow of the bot, with a `progress` workflow state set. */
  workflowId: string
  /** A scheduled (not yet due) event of the bot. */
  eventId: string
  /** An action callAction may call (`alias:action` of an installed integration). */
  action: string
}

export interface RuntimeOp {
  name: string
  write: boolean
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  url: (ids: RuntimeIds) => string
  body?: (ids: RuntimeIds) => unknown
  headers?: (ids: RuntimeIds) => Record<string, string>
  /** The operation addresses resources by id (path or body): another bot's ids answer 404. */
  scoped: boolean
  /** It names something an integration key must own (default: `scoped`): outside its installation, 404. */
  installationScoped?: boolean
  /** What an integration key gets on its own installation's ids when that is not 200 (and why). */
  installationStatus?: number
  /** What an integration key gets on another installation's ids when that is not 404 (and why). */
  foreignStatus?: number
}

const text = (t: string) => ({ text: t })

export const RUNTIME_OPS: RuntimeOp[] = [
  // conversations
  { name: 'createConversation', write: true, method: 'POST', url: () => '/v1/chat/conversations', body: () => ({ channel: 'channel', tags: {} }), scoped: false },
  { name: 'getConversation', write: false, method: 'GET', url: (i) => `/v1/chat/conversations/${i.conversationId}`, scoped: true },
  { name: 'listConversations', write: false, method: 'GET', url: () => '/v1/chat/conversations', scoped: false },
  { name: 'getOrCreateConversation', write: true, method: 'POST', url: () => '/v1/chat/conversations/get-or-create', body: () => ({ channel: 'channel', tags: { sec: 'x' } }), scoped: false },
  { name: 'updateConversation', write: true, method: 'PUT', url: (i) => `/v1/chat/conversations/${i.conversationId}`, body: () => ({ tags: { a: 'b' } }), scoped: true },
  { name: 'deleteConversation', write: true, method: 'DELETE', url: (i) => `/v1/chat/conversations/${i.conversationId}`, scoped: true },
  // human handoff: of the chat integration's conversations only, so never an installation's (404 for an integration key)
  { name: 'startConversationHandoff', write: true, method: 'POST', url: (i) => `/v1/chat/conversations/${i.conversationId}/handoff`, body: () => ({ reason: 'sec' }), scoped: true, installationStatus: 404 },
  { name: 'endConversationHandoff', write: true, method: 'POST', url: (i) => `/v1/chat/conversations/${i.conversationId}/handoff/end`, body: () => ({}), scoped: true, installationStatus: 404 },
  // participants
  { name: 'listParticipants', write: false, method: 'GET', url: (i) => `/v1/chat/conversations/${i.conversationId}/participants`, scoped: true },
  { name: 'addParticipant', write: true, method: 'POST', url: (i) => `/v1/chat/conversations/${i.conversationId}/participants`, body: (i) => ({ userId: i.userId }), scoped: true },
  { name: 'getParticipant', write: false, method: 'GET', url: (i) => `/v1/chat/conversations/${i.conversationId}/participants/${i.userId}`, scoped: true },
  { name: 'removeParticipant', write: true, method: 'DELETE', url: (i) => `/v1/chat/conversations/${i.conversationId}/participants/${i.userId}`, scoped: true },
  // messages
  { name: 'createMessage', write: true, method: 'POST', url: () => '/v1/chat/messages', body: (i) => ({ conversationId: i.conversationId, userId: i.botId, type: 'text', payload: text('hi'), tags: {} }), scoped: true },
  { name: 'getOrCreateMessage', write: true, method: 'POST', url: () => '/v1/chat/messages/get-or-create', body: (i) => ({ conversationId: i.conversationId, userId: i.botId, type: 'text', payload: text('hi'), tags: { sec: 'x' } }), scoped: true },
  { name: 'getMessage', write: false, method: 'GET', url: (i) => `/v1/chat/messages/${i.messageId}`, scoped: true },
  { name: 'updateMessage', write: true, method: 'PUT', url: (i) => `/v1/chat/messages/${i.messageId}`, body: () => ({ tags: { a: 'b' } }), scoped: true },
  { name: 'listMessages', write: false, method: 'GET', url: (i) => `/v1/chat/messages?conversationId=${i.conversationId}`, scoped: true },
  { name: 'deleteMessage', write: true, method: 'DELETE', url: (i) => `/v1/chat/messages/${i.messageId}`, scoped: true },
  { name: 'initializeIncomingMessage', write: true, method: 'POST', url: () => '/v1/chat/initialize-incoming-message', body: (i) => ({ userId: i.userId, conversationId: i.conversationId }), scoped: true },
  { name: 'importMessages', write: true, method: 'POST', url: () => '/v1/chat/messages/import-messages', body: (i) => ({ messages: [{ conversationId: i.conversationId, userId: i.userId, type: 'text', payload: text('old'), tags: { imp: '1' }, createdAt: '2024-01-01T00:00:00.000Z', discriminateByTags: ['imp'] }] }), scoped: true },
  // users
  { name: 'createUser', write: true, method: 'POST', url: () => '/v1/chat/users', body: () => ({ tags: {} }), scoped: false },
  { name: 'getUser', write: false, method: 'GET', url: (i) => `/v1/chat/users/${i.userId}`, scoped: true },
  { name: 'listUsers', write: false, method: 'GET', url: () => '/v1/chat/users', scoped: false },
  { name: 'getOrCreateUser', write: true, method: 'POST', url: () => '/v1/chat/users/get-or-create', body: () => ({ tags: { sec: 'x' } }), scoped: false },
  { name: 'updateUser', write: true, method: 'PUT', url: (i) => `/v1/chat/users/${i.userId}`, body: () => ({ name: 'n' }), scoped: true },
  { name: 'deleteUser', write: true, method: 'DELETE', url: (i) => `/v1/chat/users/${i.userId}`, scoped: true },
  // tags
  { name: 'listTagValues', write: false, method: 'GET', url: () => '/v1/chat/tags/sec/values?type=user', scoped: false },
  // actions: the alias names an installation of the caller's own bot (no other bot's id), so only the installation rule applies
  { name: 'callAction', write: true, method: 'POST', url: () => '/v1/chat/actions', body: (i) => ({ type: i.action, input: {} }), scoped: false, installationScoped: true },
  // states (declared by runtimeFixture; the fixture sets `cart` and `profile`)
  { name: 'getState', write: false, method: 'GET', url: (i) => `/v1/chat/states/conversation/${i.conversationId}/cart`, scoped: true },
  { name: 'setState', write: true, method: 'POST', url: (i) => `/v1/chat/states/user/${i.userId}/profile`, body: () => ({ payload: { name: 'n' } }), scoped: true },
  { name: 'getOrSetState', write: true, method: 'POST', url: (i) => `/v1/chat/states/conversation/${i.conversationId}/cart/get-or-set`, body: () => ({ payload: { items: [] } }), scoped: true },
  { name: 'patchState', write: true, method: 'PATCH', url: (i) => `/v1/chat/states/user/${i.userId}/profile`, body: () => ({ payload: { visits: 1 } }), scoped: true },
  { name: 'setStateExpiry', write: true, method: 'POST', url: (i) => `/v1/chat/states/workflow/${i.workflowId}/progress/expiry`, body: () => ({ expiry: 60_000 }), scoped: true },
  // events
  { name: 'createEvent', write: true, method: 'POST', url: () => '/v1/chat/events', body: (i) => ({ type: 'custom', payload: { a: 1 }, conversationId: i.conversationId }), scoped: true },
  { name: 'getEvent', write: false, method: 'GET', url: (i) => `/v1/chat/events/${i.eventId}`, scoped: true },
  { name: 'listEvents', write: false, method: 'GET', url: () => '/v1/chat/events', scoped: false },
  { name: 'cancelScheduledEvent', write: true, method: 'DELETE', url: (i) => `/v1/chat/events/scheduled/${i.eventId}`, scoped: true },
  // workflows
  { name: 'createWorkflow', write: true, method: 'POST', url: () => '/v1/chat/workflows', body: (i) => ({ name: 'w', status: 'pending', conversationId: i.conversationId }), scoped: true },
  { name: 'getOrCreateWorkflow', write: true, method: 'POST', url: () => '/v1/chat/workflows/get-or-create', body: (i) => ({ name: 'w', status: 'pending', userId: i.userId }), scoped: true },
  { name: 'getWorkflow', write: false, method: 'GET', url: (i) => `/v1/chat/workflows/${i.workflowId}`, scoped: true },
  { name: 'updateWorkflow', write: true, method: 'PUT', url: (i) => `/v1/chat/workflows/${i.workflowId}`, body: () => ({ status: 'paused' }), scoped: true },
  { name: 'deleteWorkflow', write: true, method: 'DELETE', url: (i) => `/v1/chat/workflows/${i.workflowId}`, scoped: true },
  { name: 'listWorkflows', write: false, method: 'GET', url: () => '/v1/chat/workflows', scoped: false },
  // what a bot reports about itself
  { name: 'trackAnalytics', write: true, method: 'POST', url: () => '/v1/chat/analytics', body: () => ({ name: 'n', count: 1 }), scoped: false },
  { name: 'captureObservation', write: true, method: 'POST', url: () => '/v1/chat/observations', body: () => ({ name: 'n', data: {} }), scoped: false },
  // names the installation by header: for an integration key, a header naming another installation is refused by the key's own check (403)
  { name: 'configureIntegration', write: true, method: 'POST', url: () => '/v1/chat/integrations/configure', body: () => ({ identifier: 'id-1' }), scoped: false,
    headers: (i) => ({ 'x-integration-alias': i.action.split(':')[0]! }), installationScoped: true, foreignStatus: 403 },
]

/** The state declarations every fixture bot has (the states rows use them); the fixture integrations declare them too. */
export const FIXTURE_STATES = {
  cart: { type: 'conversation', schema: { type: 'object' } },
  profile: { type: 'user', schema: { type: 'object' } },
  progress: { type: 'workflow', schema: { type: 'object' } },
}

/**
 * A conversation with a user in it and one message by the bot, on `botId`'s chat integration (or, for a bot seen
 * through an integration key's installation, on that installation), its states, a workflow, a scheduled event and
 * (chat only) an open handoff.
 */
export async function runtimeFixture(h: Harness, botOrId: string | BotRow, action = 'none:none'): Promise<RuntimeIds> {
  const bot = typeof botOrId === 'string' ? (await h.store.getBot(botOrId)) as BotRow : botOrId
  const botId = bot.id
  const installation = integrationScope(bot) !== undefined
  const chat = h.app.services.botChat
  const conversation = await chat.createConversation(bot, { channel: 'channel', tags: {} })
  const user = await chat.createUser(bot, { tags: {} })
  await chat.addParticipant(bot, conversation.id, user.id)
  const message = await chat.createMessage(bot, { conversationId: conversation.id, userId: bot.id, type: 'text', payload: text('fixture'), tags: {} })
  const { runtimeStates, runtimeWorkflows, runtimeEvents } = h.app.services
  if (!installation && Object.keys(await runtimeStates.definitions(botId)).length === 0) await runtimeStates.declare(botId, FIXTURE_STATES)
  const workflow = await runtimeWorkflows.create(bot, { name: 'fixture', status: 'pending' })
  await runtimeStates.setState(bot, 'conversation', conversation.id, 'cart', { items: [] }, undefined)
  await runtimeStates.setState(bot, 'user', user.id, 'profile', { name: 'n' }, undefined)
  await runtimeStates.setState(bot, 'workflow', workflow.id, 'progress', {}, undefined)
  const event = await runtimeEvents.create(bot, { type: 'later', payload: {}, schedule: { delay: 3_600_000 } })
  if (!installation) await h.app.services.handoffs.startForBot(bot, conversation.id, { userId: user.id })
  return { botId, conversationId: conversation.id, userId: user.id, messageId: message.id, workflowId: workflow.id, eventId: event.id, action }
}

/** An integration API key acting for a bot through one installation. */
export interface MatrixIntegration {
  /** Its `iak_…` value. */
  key: string
  /** The bot as that key sees it (for fixtures made through the domain services). */
  scoped: BotRow
}

/**
 * Three integrations served by one loopback server (a stand-in for an outside integration: it answers every
 * operation 200 with an empty `output`) declaring the fixture's states, events and an action `act`:
 * `inst` and `other` installed (and enabled) on `botId`, `elsewhere` installed on another bot only.
 */
export async function matrixIntegrations(h: Harness, botId: string): Promise<{ inst: MatrixIntegration; other: MatrixIntegration; elsewhere: MatrixIntegration; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: {} })))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const admin = async (method: 'POST' | 'PUT', path: string, payload: object) => {
    const res = await h.app.inject({ method, url: `/v1/admin${path}`, headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId }, payload })
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const object = { type: 'object' }
  const define = async (alias: string, onBot: string): Promise<MatrixIntegration> => {
    const { integration } = await admin('POST', '/integrations', {
      name: `matrix-${alias}-${uuidv7().slice(-8)}`, version: '1.0.0', url,
      states: FIXTURE_STATES, events: { later: { schema: object }, custom: { schema: object } },
      actions: { act: { input: { schema: object }, output: { schema: object } } },
    })
    await admin('PUT', `/bots/${onBot}`, { integrations: { [alias]: { integrationId: integration.id, enabled: true, configuration: {} } } })
    const { value } = await admin('POST', '/integrations/iaks', { integrationId: integration.id })
    const bot = (await h.store.getBot(onBot)) as BotRow
    const row = (await h.store.listIntegrations(onBot)).find((i) => i.name === alias)!
    return { key: value, scoped: { ...bot, integrationScope: row } as BotRow }
  }
  const elsewhereBot = (await h.app.services.bots.createBot(h.credentials.workspaceId, { name: `Elsewhere ${uuidv7().slice(-6)}` })).bot.id
  return {
    inst: await define('inst', botId),
    other: await define('other', botId),
    elsewhere: await define('elsewhere', elsewhereBot),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
