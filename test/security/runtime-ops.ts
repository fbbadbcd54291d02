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
]

/** A conversation with a user in it and one message by the bot, on `botId`'s chat integration. */
export async function runtimeFixture(h: Harness, botId: string): Promise<RuntimeIds> {
  const bot = (await h.store.getBot(botId)) as BotRow
  const chat = h.app.services.botChat
  const conversation = await chat.createConversation(bot, { channel: 'channel', tags: {} })
  const user = await chat.createUser(bot, { tags: {} })
  await chat.addParticipant(bot, conversation.id, user.id)
  const message = await chat.createMessage(bot, { conversationId: conversation.id, userId: bot.id, type: 'text', payload: text('fixture'), tags: {} })
  return { botId, conversationId: conversation.id, userId: user.id, messageId: message.id }
}
