/// <reference lib="dom" />
import { mapUrl, safeUrl } from '../shared/payload.js'
import type { CardAction, CardBody, MessagePayload, Option } from '../shared/types.js'
import { h, icon, srOnly, uniqueId } from './dom.js'
import { renderCarousel } from './carousel.js'
import { zoomableImage } from './lightbox.js'
import { renderMarkdown } from './markdown-dom.js'

export interface RenderContext {
  /**
   * Sends a text message for the user (choices, dropdowns, postback and say actions): `text` is the value the bot
   * reads, `label` what the user's bubble shows (when it differs). Rejects when the message could not be sent.
   */
  send(text: string, label?: string): Promise<void>
}

/** Disables the controls of a choice or dropdown while its answer is being sent; gives them back if it fails. */
function answering(controls: Array<HTMLButtonElement | HTMLSelectElement>, sending: Promise<void>): void {
  for (const c of controls) c.disabled = true
  sending.catch(() => {
    if (controls[0]?.closest('[data-answered]')) return
    for (const c of controls) c.disabled = false
  })
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v))

/** One message payload as DOM. Every string of the payload reaches the page as text, never as markup. */
export function renderPayload(payload: MessagePayload, ctx: RenderContext): HTMLElement {
  const p = payload as MessagePayload & Record<string, unknown>
  switch (payload.type) {
    case 'text':
      return h('p', { class: 'pw-text', text: str(payload.text) })
    case 'markdown':
      return renderMarkdown(str(payload.markdown))
    case 'image':
      return renderImage(payload.imageUrl, str(p.title) || 'Image')
    case 'audio': {
      const src = safeUrl(payload.audioUrl, 'media')
      if (!src) return unavailable('audio')
      return h('div', { class: 'pw-media' }, [
        h('audio', { attrs: { controls: '', preload: 'none', src, 'aria-label': str(p.title) || 'Audio message' } }),
        h('a', { class: 'pw-media-link', text: 'Open audio', attrs: { href: src, target: '_blank', rel: 'noopener noreferrer' } }),
      ])
    }
    case 'video': {
      const src = safeUrl(payload.videoUrl, 'media')
      if (!src) return unavailable('video')
      return h('div', { class: 'pw-media' }, [
        h('video', { attrs: { controls: '', preload: 'metadata', playsinline: '', src, 'aria-label': str(p.title) || 'Video message' } }),
        h('a', { class: 'pw-media-link', text: 'Open video', attrs: { href: src, target: '_blank', rel: 'noopener noreferrer' } }),
      ])
    }
    case 'file': {
      const href = safeUrl(payload.fileUrl)
      const name = str(payload.title) || fileName(payload.fileUrl)
      if (!href) return unavailable('file')
      return h('a', { class: 'pw-file', attrs: { href, target: '_blank', rel: 'noopener noreferrer' } }, [
        icon('file'),
        srOnly('File: '),
        h('span', { class: 'pw-file-name', text: name }),
      ])
    }
    case 'location': {
      const lat = Number(payload.latitude)
      const lon = Number(payload.longitude)
      const title = str(payload.title) || str(payload.address) || 'Location'
      return h('div', { class: 'pw-location' }, [
        h('a', { class: 'pw-location-link', attrs: { href: mapUrl(lat, lon), target: '_blank', rel: 'noopener noreferrer' } }, [
          icon('pin'),
          srOnly('Location: '),
          h('span', { class: 'pw-location-title', text: title }),
        ]),
        payload.address && payload.title ? h('p', { class: 'pw-location-address', text: str(payload.address) }) : null,
        h('p', { class: 'pw-location-coords', text: `${lat.toFixed(5)}, ${lon.toFixed(5)}` }),
      ])
    }
    case 'card':
      return renderCard(payload, ctx)
    case 'carousel':
      return renderCarousel(Array.isArray(payload.items) ? payload.items : [], (item) => renderCard(item, ctx))
    case 'choice':
      return renderChoice(str(payload.text), payload.options, ctx)
    case 'dropdown':
      return renderDropdown(str(payload.text), payload.options, ctx)
    case 'bloc': {
      const items = Array.isArray(payload.items) ? payload.items : []
      return h('div', { class: 'pw-bloc' }, items.map((item) => renderPayload(item, ctx)))
    }
    default:
      return h('p', { class: 'pw-text pw-unsupported', text: `[unsupported message: ${str((payload as { type?: unknown }).type)}]` })
  }
}

function unavailable(what: string): HTMLElement {
  return h('p', { class: 'pw-text pw-unsupported', text: `[${what} unavailable: unsupported address]` })
}

function fileName(url: unknown): string {
  try {
    const last = new URL(str(url)).pathname.split('/').filter(Boolean).pop()
    return last ? decodeURIComponent(last) : 'File'
  } catch {
    return 'File'
  }
}

function renderImage(url: unknown, alt: string): HTMLElement {
  const src = safeUrl(url, 'media')
  if (!src) return unavailable('image')
  return zoomableImage(src, alt, 'pw-image')
}

function renderCard(card: CardBody, ctx: RenderContext): HTMLElement {
  const image = safeUrl(card.imageUrl, 'media')
  const actions = Array.isArray(card.actions) ? card.actions : []
  return h('div', { class: 'pw-card' }, [
    image ? h('img', { class: 'pw-card-image', attrs: { src: image, alt: '', loading: 'lazy', referrerpolicy: 'no-referrer' } }) : null,
    h('div', { class: 'pw-card-body' }, [
      h('p', { class: 'pw-card-title', text: str(card.title) }),
      card.subtitle ? h('p', { class: 'pw-card-subtitle', text: str(card.subtitle) }) : null,
    ]),
    actions.length > 0 ? h('div', { class: 'pw-actions' }, actions.map((a) => renderAction(a, ctx))) : null,
  ])
}

function renderAction(action: CardAction, ctx: RenderContext): HTMLElement {
  const label = str(action.label)
  if (action.action === 'url') {
    const href = safeUrl(action.value)
    if (!href) return h('button', { class: 'pw-button', text: label, attrs: { type: 'button', disabled: '', title: 'Unsupported link' } })
    return h('a', { class: 'pw-button pw-button-link', attrs: { href, target: '_blank', rel: 'noopener noreferrer' } }, [
      label,
      srOnly(' (opens in a new tab)'),
    ])
  }
  return h('button', {
    class: 'pw-button',
    text: label,
    attrs: { type: 'button', 'data-action': action.action },
    // A postback's value is for the bot: the user's bubble shows the label. `say` says the value.
    on: { click: () => void ctx.send(str(action.value), action.action === 'postback' ? label : undefined).catch(() => undefined) },
  })
}

function renderChoice(text: string, options: Option[], ctx: RenderContext): HTMLElement {
  const id = uniqueId('pw-choice')
  const list = Array.isArray(options) ? options : []
  const buttons: HTMLButtonElement[] = list.map((o, i) => h('button', {
    class: 'pw-button',
    text: str(o.label),
    attrs: { type: 'button', 'data-value': str(o.value), 'data-index': String(i) },
    on: { click: () => answering(buttons, ctx.send(str(o.value), str(o.label))) },
  }))
  return h('div', { class: 'pw-choice' }, [
    h('p', { class: 'pw-text', text, attrs: { id } }),
    h('div', { class: 'pw-actions', attrs: { role: 'group', 'aria-labelledby': id } }, buttons),
  ])
}

function renderDropdown(text: string, options: Option[], ctx: RenderContext): HTMLElement {
  const id = uniqueId('pw-dropdown')
  const list = Array.isArray(options) ? options : []
  const select = h('select', { class: 'pw-select', attrs: { id } }, [
    h('option', { text: 'Choose…', attrs: { value: '', disabled: '', selected: '' } }),
    ...list.map((o, i) => h('option', { text: str(o.label), attrs: { value: String(i) } })),
  ])
  const button = h('button', {
    class: 'pw-button',
    text: 'Send',
    attrs: { type: 'button' },
    on: {
      click: () => {
        const option = list[Number(select.value)]
        if (select.value === '' || !option) {
          select.focus()
          return
        }
        answering([select, button], ctx.send(str(option.value), str(option.label)))
      },
    },
  })
  return h('div', { class: 'pw-dropdown' }, [
    h('label', { class: 'pw-text', text, attrs: { for: id } }),
    h('div', { class: 'pw-dropdown-row' }, [select, button]),
  ])
}
