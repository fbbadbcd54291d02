import { Type } from 'typebox'
import { MAX_STATE_EXPIRY_MS, MIN_STATE_EXPIRY_MS } from '../../../domain/runtime-state-service.js'
import { IsoDate, JsonObjectSchema } from '../../schemas/common.js'
import type { InstallationRef } from '../../../domain/installation-scope.js'

const StateTypeSchema = Type.Union([
  Type.Literal('conversation'), Type.Literal('user'), Type.Literal('bot'), Type.Literal('integration'), Type.Literal('workflow'),
])

/** `/v1/chat/states/{type}/{id}/{name}` */
export const StateParams = Type.Object({
  type: Type.Union(StateTypeSchema.anyOf, { description: 'The resource the state belongs to' }),
  id: Type.String({ minLength: 1, maxLength: 200, description: 'Id of the conversation, user, bot, integration (id or name) or workflow' }),
  name: Type.String({ minLength: 1, maxLength: 100, description: 'A state declared in the bot definition (updateBot `states`)' }),
})

export const StateExpiry = Type.Union([
  Type.Integer({ minimum: MIN_STATE_EXPIRY_MS, maximum: MAX_STATE_EXPIRY_MS, description: 'Idle milliseconds after which the state expires' }),
  Type.Null(),
])

export const StateSchema = Type.Object({
  id: Type.String(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  botId: Type.String(),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  name: Type.String(),
  type: StateTypeSchema,
  payload: JsonObjectSchema,
  expiry: Type.Optional(Type.Integer()),
  expiresAt: Type.Optional(IsoDate),
})

export const StateResponse = Type.Object({ state: StateSchema })
export const CachedStateResponse = Type.Object({ state: StateSchema, meta: Type.Object({ cached: Type.Boolean() }) })

/** The resource a state route names (`/states/:type/:id/…`), for the integration-key check (src/domain/installation-scope.ts). */
export const stateInstallation = (r: { params: unknown }): InstallationRef[] => {
  const { type, id } = r.params as { type: string; id: string }
  return [{ kind: 'state', type, id }]
}
