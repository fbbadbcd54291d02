import { Type } from 'typebox'
import { StringMap } from '../../../schemas/common.js'

/** The console's conversation filters (listBotConversations, exportBotConversations). */
export const ArchiveQuery = {
  q: Type.Optional(Type.String({ maxLength: 200, description: 'A word or phrase of a message, a user id, or a conversation or message tag value' })),
  from: Type.Optional(Type.String({ maxLength: 64, description: 'Conversations active at or after this ISO 8601 date or date-time' })),
  to: Type.Optional(Type.String({ maxLength: 64, description: 'Conversations created at or before this ISO 8601 date or date-time' })),
  failed: Type.Optional(Type.Boolean({ description: 'Only conversations with a failed or timed-out turn (an error-level log)' })),
  handoff: Type.Optional(Type.Boolean({ description: 'Only conversations handed to a person at least once (a human handoff, open or ended)' })),
}

export const ArchiveConversationSchema = Type.Object({
  id: Type.String(),
  userId: Type.Optional(Type.String()),
  createdAt: Type.String(),
  lastMessageAt: Type.String(),
  messageCount: Type.Integer(),
  tags: StringMap(Type.String()),
})

export const conversationView = (c: { id: string; ownerId: string | null; createdAt: number; lastAt: number; messageCount: number; tags: Record<string, string> }) => ({
  id: c.id, ...(c.ownerId !== null && { userId: c.ownerId }), createdAt: new Date(c.createdAt).toISOString(),
  lastMessageAt: new Date(c.lastAt).toISOString(), messageCount: c.messageCount, tags: c.tags,
})
