import type { CardAction, MessagePayload } from './types.js'

/**
 * URLs from message payloads are untrusted. Links may be http(s), mailto: or tel:; media (images, audio, video)
 * only http(s). Anything else (javascript:, data:, vbscript:, relative paths…) is refused.
 */
export function safeUrl(value: unknown, kind: 'link' | 'media' = 'link'): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return undefined
  }
  const allowed = kind === 'media' ? ['http:', 'https:'] : ['http:', 'https:', 'mailto:', 'tel:']
  return allowed.includes(url.protocol) ? url.href : undefined
}

/** A map page for a location payload (OpenStreetMap: no key, no tracking script). */
export function mapUrl(latitude: number, longitude: number): string {
  const lat = Number(latitude).toFixed(6)
  const lon = Number(longitude).toFixed(6)
  return `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=16/${lat}/${lon}`
}

/** Something the user can pick in a message: an option of a choice or dropdown, or a card's action. */
export interface Pickable {
  label: string
  /** `send`: the value goes back as a text message; `open`: the value is a URL to open. */
  kind: 'send' | 'open'
  value: string
}

export function actionPickable(action: CardAction): Pickable {
  return { label: action.label, kind: action.action === 'url' ? 'open' : 'send', value: action.value }
}

/** Everything pickable in a payload, in display order (the CLI numbers them). */
export function pickablesOf(payload: MessagePayload): Pickable[] {
  switch (payload.type) {
    case 'choice':
    case 'dropdown':
      return (payload.options ?? []).map((o) => ({ label: o.label, kind: 'send' as const, value: o.value }))
    case 'card':
      return (payload.actions ?? []).map(actionPickable)
    case 'carousel':
      return (payload.items ?? []).flatMap((item) => (item.actions ?? []).map(actionPickable))
    default:
      return []
  }
}

/** A one-line plain-text description of a payload (for the terminal and for accessible labels). */
export function describePayload(payload: MessagePayload): string {
  switch (payload.type) {
    case 'text':
      return payload.text
    case 'markdown':
      return payload.markdown
    case 'image':
      return `[image] ${payload.imageUrl}`
    case 'audio':
      return `[audio] ${payload.audioUrl}`
    case 'video':
      return `[video] ${payload.videoUrl}`
    case 'file':
      return `[file] ${payload.title ? `${payload.title} ` : ''}${payload.fileUrl}`
    case 'location':
      return `[location] ${[payload.title, payload.address].filter(Boolean).join(', ') || 'a place'} (${payload.latitude}, ${payload.longitude}) ${mapUrl(payload.latitude, payload.longitude)}`
    case 'card':
      return `[card] ${payload.title}${payload.subtitle ? ` — ${payload.subtitle}` : ''}`
    case 'carousel':
      return `[carousel] ${(payload.items ?? []).map((i) => i.title).join(' | ')}`
    case 'choice':
    case 'dropdown':
      return payload.text
    case 'bloc':
      return (payload.items ?? []).map((i) => describePayload(i)).join('\n')
    default: {
      const unknown = payload as { type?: unknown }
      return `[${String(unknown.type)}]`
    }
  }
}
