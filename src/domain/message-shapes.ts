import { errors } from '../lib/errors.js'
import type { JsonObject } from '../store/store.js'

/**
 * A message's two shapes, converted here and nowhere else (docs/runtime-api.md, "Message shapes"), as
 * Botpress's chat integration maps them:
 * - the Chat API's (what is stored, what @botpress/chat sends and reads): `payload: { type, ...fields }`,
 *   a bloc's items flat (`{ type: 'text', text }`), and `metadata` beside the payload;
 * - the Runtime API's (@botpress/client, @botpress/sdk bots and integrations): `type` beside a payload
 *   without it, the metadata inside the payload (`payload.metadata`), a bloc's items `{ type, payload }`.
 * Into the chat shape a bloc item may also be flat already (what Parley took before): it is kept as is.
 */
export interface ChatShape { payload: JsonObject; metadata: JsonObject | null }
export interface RuntimeShape { type: string; payload: JsonObject }

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Stored (chat) payload and metadata → the Runtime API's `{ type, payload }`. */
export function runtimeShapeOf(chatPayload: JsonObject, metadata: JsonObject | null): RuntimeShape {
  const { type, ...payload } = chatPayload
  if (type === 'bloc' && Array.isArray(payload.items)) {
    payload.items = payload.items.map((item) => {
      if (!isObject(item)) return item
      const { type: itemType, ...itemPayload } = item
      return { type: itemType ?? null, payload: itemPayload }
    })
  }
  if (metadata !== null) payload.metadata = metadata
  return { type: typeof type === 'string' ? type : 'unknown', payload }
}

/**
 * The Runtime API's `{ type, payload }` → the chat payload (the top-level `type` wins) and metadata (none
 * when the payload has no `metadata`, or null). 400 for a `metadata` that is not an object and for a bloc
 * item `{ type, payload }` with a payload that is not an object or with other fields; the rest is checked
 * against the Chat API's payload rules by the caller.
 */
export function chatShapeOf(type: string, runtimePayload: JsonObject): ChatShape {
  const { metadata, ...payload } = runtimePayload
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) throw errors.invalidPayload('payload/metadata must be an object')
  if (type === 'bloc' && Array.isArray(payload.items)) {
    payload.items = payload.items.map((item, i) => {
      if (!isObject(item) || !Object.hasOwn(item, 'payload')) return item
      const { type: itemType, payload: itemPayload, ...rest } = item
      if (!isObject(itemPayload)) throw errors.invalidPayload(`payload/items/${i}/payload must be an object`)
      if (Object.keys(rest).length > 0) {
        throw errors.invalidPayload(`payload/items/${i} must be { type, payload } (or a flat Chat API item); it also has: ${Object.keys(rest).slice(0, 10).join(', ')}`)
      }
      return { ...itemPayload, type: itemType ?? null }
    })
  }
  return { payload: { ...payload, type }, metadata: isObject(metadata) ? metadata : null }
}

/**
 * 400 unless `type` is one of the message types the conversation's channel declares (an installed
 * integration's definition: `channels.<channel>.messages`), naming them.
 */
export function checkDeclaredType(type: string, declared: readonly string[], channel: string, integration: string): void {
  if (declared.includes(type)) return
  throw errors.invalidPayload(
    `type must be one of the message types channel "${channel}" of integration "${integration}" declares: ${declared.join(', ') || 'none'}; got ${JSON.stringify(type.slice(0, 100))}`,
  )
}
