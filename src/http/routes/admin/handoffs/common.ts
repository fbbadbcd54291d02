import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import { IsoDate } from '../../../schemas/common.js'
import type { HandoffCaller } from '../../../../domain/handoff-service.js'

/** The Admin API's Handoff (README "Human handoff"). */
export const HandoffSchema = Type.Object({
  id: Type.String(),
  botId: Type.String(),
  conversationId: Type.String(),
  userId: Type.String(),
  status: Type.Union([Type.Literal('waiting'), Type.Literal('active'), Type.Literal('ended')]),
  reason: Type.Optional(Type.String()),
  requestedAt: IsoDate,
  claimedBy: Type.Optional(Type.Object({ memberId: Type.String(), name: Type.String(), avatarUrl: Type.Optional(Type.String()) })),
  claimedAt: Type.Optional(IsoDate),
  endedAt: Type.Optional(IsoDate),
  notes: Type.Array(Type.Object({ memberId: Type.String(), text: Type.String(), createdAt: IsoDate })),
})

export const HandoffNoteSchema = Type.Object({ memberId: Type.String(), text: Type.String(), createdAt: IsoDate })

export const BotParams = Type.Object({ id: Type.String({ maxLength: 200 }) })
export const ConversationParams = Type.Object({ id: Type.String({ maxLength: 200 }), conversationId: Type.String({ maxLength: 200 }) })

export const caller = (request: FastifyRequest): HandoffCaller => ({ account: request.account, role: request.role })
