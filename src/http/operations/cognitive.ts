/**
 * The v2 cognitive API's request, defined once: its routes (src/http/routes/cognitive/) validate their body with it,
 * and the sandbox host validates bot code's client.generateText input with the same compiled schema, so bot code
 * gets the routes' exact errors.
 */
import { Type } from 'typebox'
import { validatedBody } from './operation.js'
import type { CognitiveRequest } from '../../domain/llm/cognitive-v2.js'

const open = { additionalProperties: true }
const Text = Type.String({ maxLength: 1_000_000 })
const ContentPart = Type.Object({
  type: Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('audio')]),
  text: Type.Optional(Text), url: Type.Optional(Type.String({ maxLength: 100_000 })), mimeType: Type.Optional(Type.String({ maxLength: 200 })),
}, open)
const ToolCallIn = Type.Object({
  id: Type.String({ maxLength: 500 }),
  type: Type.Optional(Type.String({ maxLength: 50 })),
  function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), arguments: Type.Optional(Type.Union([Type.Object({}, open), Type.Null()])) }, open),
}, open)
const ModelId = Type.String({ minLength: 1, maxLength: 300 })

/** `CognitiveRequest` (llm-wire.md §1.3): the keys Parley reads are checked, any other key is ignored. */
export const CognitiveRequestBody = Type.Object({
  messages: Type.Array(Type.Object({
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
    content: Type.Optional(Type.Union([Text, Type.Array(ContentPart, { maxItems: 1000 }), Type.Null()])),
    type: Type.Optional(Type.String({ maxLength: 50 })),
    toolCalls: Type.Optional(Type.Array(ToolCallIn, { maxItems: 128 })),
    toolResultCallId: Type.Optional(Type.String({ maxLength: 500 })),
  }, open), { minItems: 1, maxItems: 10_000 }),
  model: Type.Optional(Type.Union([ModelId, Type.Array(ModelId, { minItems: 1, maxItems: 16 })])),
  systemPrompt: Type.Optional(Text),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  stopSequences: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 16 })])),
  responseFormat: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('json'), Type.Literal('json_object')])),
  reasoningEffort: Type.Optional(Type.String({ maxLength: 20 })),
  tools: Type.Optional(Type.Array(Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }), description: Type.Optional(Type.String({ maxLength: 100_000 })), parameters: Type.Optional(Type.Object({}, open)),
  }, open), { maxItems: 128 })),
  toolControl: Type.Optional(Type.Object({
    mode: Type.Union([Type.Literal('auto'), Type.Literal('none'), Type.Literal('required'), Type.Literal('specific')]), toolName: Type.Optional(Type.String({ maxLength: 200 })),
  }, open)),
  meta: Type.Optional(Type.Object({}, open)),
}, open)


/** Bot code's input of a model call, checked as the routes check their body (400 InvalidPayload with the same message). */
export function cognitiveRequest(input: unknown): CognitiveRequest {
  return validatedBody(CognitiveRequestBody, input) as CognitiveRequest
}
