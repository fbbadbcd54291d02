import type { JsonObject } from '../store/store.js'

/**
 * Brings a payload sent by bot code to the form every official client can read. The spec's carousel
 * items carry no `type`, but @botpress/chat's stream schema requires `type: 'card'` on each, and a
 * signal that fails its schema reaches the app as `unknown`: so the bot's items get it when missing.
 * (What a user sends is stored exactly as sent.)
 */
export function normalizePayload(payload: JsonObject): JsonObject {
  if (payload.type !== 'carousel' || !Array.isArray(payload.items)) return payload
  return { ...payload, items: payload.items.map((item) => (item && typeof item === 'object' && !Array.isArray(item) ? { ...item, type: 'card' } : item)) }
}
