import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { can } from '../../../../domain/permissions.js'
import { StringMap } from '../../../schemas/common.js'
import { ArchiveConversationSchema, conversationView } from './archive-schemas.js'

const Json = StringMap(Type.Unknown())

export default function getBotConversationTranscript(app: App): void {
  app.get('/bots/:id/conversations/:conversationId/transcript', {
    config: { permission: 'conversations.read' },
    schema: adminSchema('getBotConversationTranscript', 'One conversation with its messages (oldest first, at most 1,000), its users, the model calls made for it (the last 500) and the bot\'s logs of its turns (the console; the logs only for roles that read bots: an agent gets none)',
      { params: Type.Object({ id: Type.String(), conversationId: Type.String() }) },
      {
        200: Type.Object({
          conversation: ArchiveConversationSchema,
          messages: Type.Array(Type.Object({
            id: Type.String(), seq: Type.Integer(), userId: Type.String(), direction: Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')]),
            createdAt: Type.String(), payload: Json, metadata: Type.Optional(Json),
          })),
          truncated: Type.Boolean(),
          users: Type.Array(Type.Object({
            id: Type.String(), name: Type.Optional(Type.String()), pictureUrl: Type.Optional(Type.String()), isBot: Type.Boolean(), createdAt: Type.String(),
          })),
          logs: Type.Array(Type.Object({ timestamp: Type.String(), level: Type.String(), message: Type.String() })),
          llmCalls: Type.Array(Type.Object({
            timestamp: Type.String(), via: Type.String(), provider: Type.String(), model: Type.String(),
            inputTokens: Type.Integer(), outputTokens: Type.Integer(), cost: Type.Number(), latencyMs: Type.Integer(),
            stopReason: Type.Optional(Type.String()), error: Type.Optional(Type.String()), promptSource: Type.Optional(Type.String()),
          })),
        }),
      }),
  }, async (request) => {
    const { id, conversationId } = request.params
    const [t, calls] = await Promise.all([
      app.services.archive.transcript(request.workspace.id, id, conversationId),
      app.services.llmUsage.conversationCalls(request.workspace.id, id, conversationId),
    ])
    return {
      conversation: conversationView(t.conversation),
      messages: t.messages.map((m) => ({
        id: m.id, seq: m.seq, userId: m.userId, direction: m.isBot ? 'outgoing' as const : 'incoming' as const,
        createdAt: new Date(m.createdAt).toISOString(), payload: m.payload, ...(m.metadata && { metadata: m.metadata }),
      })),
      truncated: t.truncated,
      users: t.users.map((u) => ({
        id: u.id, ...(u.name !== null && { name: u.name }), ...(u.pictureUrl !== null && { pictureUrl: u.pictureUrl }), isBot: u.isBot, createdAt: new Date(u.createdAt).toISOString(),
      })),
      // an agent reads conversations, not the bot's workings
      logs: can(request.role, 'bots.read') ? t.logs.map((l) => ({ timestamp: new Date(l.at).toISOString(), level: l.level, message: l.message })) : [],
      // The turn trace's model calls: whoever reads the conversation sees what its answers cost.
      llmCalls: calls.map((c) => ({
        timestamp: new Date(c.createdAt).toISOString(), via: c.via, provider: c.provider, model: c.model, inputTokens: c.inputTokens, outputTokens: c.outputTokens,
        cost: c.inputCost + c.outputCost, latencyMs: c.latencyMs, ...(c.stopReason && { stopReason: c.stopReason }), ...(c.error && { error: c.error }),
        ...(c.promptSource && { promptSource: c.promptSource }),
      })),
    }
  })
}
