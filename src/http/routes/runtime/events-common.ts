import { Type } from 'typebox'
import { EVENT_PAGE_SIZE, MAX_EVENT_DELAY_MS } from '../../../domain/runtime-event-service.js'
import { IsoDate, JsonObjectSchema } from '../../schemas/common.js'

export const EventStatusSchema = Type.Union([
  Type.Literal('pending'), Type.Literal('processed'), Type.Literal('ignored'), Type.Literal('failed'), Type.Literal('scheduled'), Type.Literal('canceled'),
])

export const EventSchema = Type.Object({
  id: Type.String(),
  createdAt: IsoDate,
  type: Type.String(),
  payload: JsonObjectSchema,
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  messageId: Type.Optional(Type.String()),
  status: EventStatusSchema,
  failureReason: Type.Union([Type.String(), Type.Null()]),
})

export const EventResponse = Type.Object({ event: EventSchema })

const Ref = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }))

export const CreateEventBody = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 200, description: 'The event type the bot sees' }),
  payload: JsonObjectSchema,
  schedule: Type.Optional(Type.Object({
    dateTime: Type.Optional(Type.String({ format: 'date-time', description: 'When to deliver it (a past date: at once)' })),
    delay: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_EVENT_DELAY_MS, description: 'Milliseconds from now' })),
  }, { description: 'Exactly one of dateTime or delay; precision: PARLEY_RUNTIME_EVENT_POLL_MS' })),
  conversationId: Ref('A conversation of the bot: the event goes to its log like a Chat API custom event'),
  userId: Ref('A user of the bot'),
  workflowId: Ref('A workflow of the bot'),
  messageId: Ref('A message of the bot'),
})

export const EventIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) })

export const EventListQuery = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENT_PAGE_SIZE.max })),
  type: Type.Optional(Type.String({ maxLength: 200 })),
  conversationId: Type.Optional(Type.String({ maxLength: 200 })),
  userId: Type.Optional(Type.String({ maxLength: 200 })),
  messageId: Type.Optional(Type.String({ maxLength: 200 })),
  workflowId: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(EventStatusSchema),
})
