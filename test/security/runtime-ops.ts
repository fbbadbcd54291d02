/**
 * The Runtime API operations the security matrix (runtime.security.test.ts) runs, one row each.
 * To add operations: append rows to RUNTIME_OPS (or push your own array into it) — each row says
 * how to call the operation on a set of resource ids (`RuntimeIds`), whether it writes, and whether
 * it names a resource (then another bot's or workspace's ids must give 404).
 */
import type { Harness } from '../helpers/harness.js'
import type { BotRow } from '../../src/store/store.js'

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
}

export interface RuntimeOp {
  name: string
  write: boolean
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  url: (ids: RuntimeIds) => string
  body?: (ids: RuntimeIds) => unknown
  /** The operation addresses resources by id (path or body): another bot's ids answer 404. */
  scoped: boolean
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
  { name: 'configureIntegration', write: true, method: 'POST', url: () => '/v1/chat/integrations/configure', body: () => ({ identifier: 'id-1' }), scoped: false },
]

/** The state declarations every fixture bot has (the states rows use them). */
const FIXTURE_STATES = {
  cart: { type: 'conversation', schema: { type: 'object' } },
  profile: { type: 'user', schema: { type: 'object' } },
  progress: { type: 'workflow', schema: { type: 'object' } },
}

/** A conversation with a user in it and one message by the bot, on `botId`'s chat integration. */
export async function runtimeFixture(h: Harness, botId: string): Promise<RuntimeIds> {
  const bot = (await h.store.getBot(botId)) as BotRow
  const chat = h.app.services.botChat
  const conversation = await chat.createConversation(bot, { channel: 'channel', tags: {} })
  const user = await chat.createUser(bot, { tags: {} })
  await chat.addParticipant(bot, conversation.id, user.id)
  const message = await chat.createMessage(bot, { conversationId: conversation.id, userId: bot.id, type: 'text', payload: text('fixture'), tags: {} })
  const { runtimeStates, runtimeWorkflows, runtimeEvents } = h.app.services
  if (Object.keys(await runtimeStates.definitions(botId)).length === 0) await runtimeStates.declare(botId, FIXTURE_STATES)
  const workflow = await runtimeWorkflows.create(bot, { name: 'fixture', status: 'pending' })
  await runtimeStates.setState(bot, 'conversation', conversation.id, 'cart', { items: [] }, undefined)
  await runtimeStates.setState(bot, 'user', user.id, 'profile', { name: 'n' }, undefined)
  await runtimeStates.setState(bot, 'workflow', workflow.id, 'progress', {}, undefined)
  const event = await runtimeEvents.create(bot, { type: 'later', payload: {}, schedule: { delay: 3_600_000 } })
  return { botId, conversationId: conversation.id, userId: user.id, messageId: message.id, workflowId: workflow.id, eventId: event.id }
}
