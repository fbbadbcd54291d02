import { Ajv } from 'ajv'
import { MessagePayloadSchema, payloadTypeProblem } from './chat.js'

/**
 * The Chat API's payload rules as a function, for payloads that do not arrive through a route
 * (bot code sending messages, beforeIncoming hooks changing them). Returns a description of the
 * first problem, or undefined when the payload is valid.
 */
const validate = new Ajv({ strict: false, discriminator: true, allErrors: false }).compile(MessagePayloadSchema)

export function validateMessagePayload(payload: unknown): string | undefined {
  if (validate(payload)) return undefined
  const error = validate.errors?.[0]
  if (!error) return 'payload is invalid'
  // An unknown type lists the allowed ones (as the Chat API's routes answer), not ajv's `must be in oneOf`.
  return payloadTypeProblem(error, `payload${error.instancePath}`) ?? `payload${error.instancePath} ${error.message ?? 'is invalid'}`
}
