import { Type } from 'typebox'
import { WORKFLOW_PAGE_SIZE } from '../../../domain/runtime-workflow-service.js'
import { IsoDate, JsonObjectSchema, StringMap } from '../../schemas/common.js'


export const WorkflowStatusSchema = Type.Union([
  Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('failed'), Type.Literal('completed'),
  Type.Literal('listening'), Type.Literal('paused'), Type.Literal('timedout'), Type.Literal('cancelled'),
])

export const WorkflowSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: WorkflowStatusSchema,
  input: JsonObjectSchema,
  output: JsonObjectSchema,
  parentWorkflowId: Type.Optional(Type.String()),
  conversationId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  completedAt: Type.Optional(IsoDate),
  failureReason: Type.Optional(Type.String()),
  timeoutAt: IsoDate,
  tags: StringMap(Type.String()),
})

export const WorkflowResponse = Type.Object({ workflow: WorkflowSchema })

const Id = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }))
const TagKey = { minKeyLength: 1, maxKeyLength: 100 }

/** createWorkflow / getOrCreateWorkflow body. */
export const NewWorkflowFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  input: Type.Optional(JsonObjectSchema),
  parentWorkflowId: Id('A workflow of this bot'),
  conversationId: Id('A conversation of this bot'),
  userId: Id('A user of this bot'),
  timeoutAt: Type.Optional(Type.String({ format: 'date-time', description: 'Default: 24 hours after creation; then the workflow becomes timedout' })),
  tags: Type.Optional(StringMap(Type.String({ maxLength: 500 }), TagKey)),
  status: Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('listening')]),
  eventId: Id('Required with status in_progress'),
}

export const WorkflowIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) })

export const WorkflowUpdateBody = Type.Object({
  output: Type.Optional(JsonObjectSchema),
  timeoutAt: Type.Optional(Type.String({ format: 'date-time' })),
  status: Type.Optional(Type.Union([
    Type.Literal('completed'), Type.Literal('cancelled'), Type.Literal('listening'), Type.Literal('paused'), Type.Literal('failed'), Type.Literal('in_progress'),
  ])),
  failureReason: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(StringMap(Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), TagKey)),
  userId: Id('A user of this bot'),
  eventId: Id('The event that moved the workflow'),
})

export const WorkflowListQuery = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: WORKFLOW_PAGE_SIZE.max })),
  tags: Type.Optional(StringMap(Type.String(), { description: 'Dot notation: tags.key=value; every tag must match' })),
  conversationId: Type.Optional(Type.String({ maxLength: 200 })),
  userId: Type.Optional(Type.String({ maxLength: 200 })),
  parentWorkflowId: Type.Optional(Type.String({ maxLength: 200 })),
  statuses: Type.Optional(Type.Array(WorkflowStatusSchema, { maxItems: 8 })),
  name: Type.Optional(Type.String({ maxLength: 200 })),
})
