import { Ajv } from 'ajv'
import { MessagePayloadSchema } from './chat.js'

/**
 * The Chat API's payload rules as a function, for payloads that do not arrive through a route
 * (bot code sending messages, beforeIncoming hooks changing them). Returns a description of the
 * first problem, or undefined when the payload is valid.
 */
const validate = new Ajv({ strict: false, discriminator: true, allErrors: false }).compile(MessagePayloadSchema)

export function validateMessagePayload(payload: unknown): string | undefined {
  if (validate(payload)) return undefined
  const error = validate.errors?.[0]
  return error ? `payload${error.instancePath} ${error.message ?? 'is invalid'}` : 'payload is invalid'
}
