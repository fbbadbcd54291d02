import type { BotChatConversation, BotChatMessage, BotChatUser, Tags } from '../store/bot-chat-store.js'
import type { JsonObject, MessageRow, UserRow } from '../store/store.js'
import { runtimeShapeOf } from './message-shapes.js'

/**
 * Row → Runtime API object (the bot side of @botpress/client: `Conversation`, `User`, `Message`).
 * One function per resource, used by every runtime route, the sandboxed bot's client and remote-bot
 * event payloads, so that a bot sees the same object whichever way it reads it.
 */
const iso = (ms: number) => new Date(ms).toISOString()

export interface RuntimeUserView {
  id: string; createdAt: string; updatedAt: string; tags: Tags; name?: string; pictureUrl?: string
  properties?: Tags; attributes?: Tags
}
export interface RuntimeConversationView {
  id: string; createdAt: string; updatedAt: string; channel: string; integration: string; tags: Tags; messageCount: number; properties?: Tags
}
export interface RuntimeMessageView {
  id: string; createdAt: string; updatedAt: string; type: string; payload: JsonObject; direction: 'incoming' | 'outgoing'
  userId: string; conversationId: string; tags: Tags
}

/** A conversation as the Runtime API returns it, with the name of its integration. */
export type RuntimeConversation = BotChatConversation & { integrationName: string }

/** A user row of the Chat API (no tags loaded) or of the Runtime API. */
export function runtimeUserView(u: UserRow | BotChatUser): RuntimeUserView {
  const extra = u as Partial<BotChatUser>
  return {
    id: u.id,
    createdAt: iso(u.createdAt),
    updatedAt: iso(u.updatedAt),
    tags: extra.tags ?? {},
    ...(u.name !== null && { name: u.name }),
    ...(u.pictureUrl !== null && { pictureUrl: u.pictureUrl }),
    ...(extra.properties && { properties: extra.properties }),
    ...(extra.attributes && { attributes: extra.attributes }),
  }
}

export function runtimeConversationView(c: RuntimeConversation): RuntimeConversationView {
  return {
    id: c.id,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    channel: c.channel,
    integration: c.integrationName,
    tags: c.tags,
    messageCount: c.messageCount,
    ...(c.properties && { properties: c.properties }),
  }
}

/**
 * The Chat API's stored payload and metadata in the Runtime API's shape (src/domain/message-shapes.ts).
 * `direction` is 'outgoing' for the bot's own messages (its user, id = the bot id), else 'incoming'.
 */
export function runtimeMessageView(m: MessageRow | BotChatMessage): RuntimeMessageView {
  const { type, payload } = runtimeShapeOf(m.payload, m.metadata)
  const extra = m as Partial<BotChatMessage>
  return {
    id: m.id,
    createdAt: iso(m.createdAt),
    updatedAt: iso(extra.updatedAt ?? m.createdAt),
    type,
    payload,
    direction: m.isBot ? 'outgoing' : 'incoming',
    userId: m.userId,
    conversationId: m.conversationId,
    tags: extra.tags ?? {},
  }
}
