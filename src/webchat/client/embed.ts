/// <reference lib="dom" />
import { readableOn, sanitizeWebchatConfig, SERVER_ONLY_KEYS, webchatOverrides, WEBCHAT_CONFIG_KEYS, type WebchatConfig } from '../shared/webchat-config.js'

/**
 * Embeds a Parley webchat in any page:
 *
 *   <script src="https://parley.example.com/webchat/embed.js" data-webhook-id="…" async></script>
 *
 * Optional attributes: data-title (header text), data-open="true" (start open), data-label (launcher text), and
 * every webchat setting as a data-* attribute (data-bot-name, data-primary-color, data-launcher-label…), or
 * data-config="<id>" naming a `<script type="application/json">` element holding them (and the webhookId): the
 * configurable snippet of getBotWebchat. They override the bot's own settings. Adds a launcher button and, when
 * opened, an iframe of `/webchat/{webhookId}`. The launcher takes the bot's own settings from Parley (a
 * cross-origin GET of `/{webhookId}/webchat`) under the embed's, and shows a badge counting the messages
 * that arrived while the panel was closed. Styles are set through the CSSOM, so a host page's CSP that forbids
 * inline style attributes does not break it. `window.ParleyWebchat` has open(), close() and toggle().
 */
;(() => {
  const script = document.currentScript as HTMLScriptElement | null
  let json: Record<string, unknown> = {}
  const configId = script?.dataset.config
  if (configId) {
    try {
      const parsed = JSON.parse(document.getElementById(configId)?.textContent ?? '') as unknown
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>
    } catch {
      console.error(`[parley] embed.js: the element #${configId} named by data-config does not hold a JSON object`)
    }
  }
  const webhookId = script?.dataset.webhookId || (typeof json.webhookId === 'string' ? json.webhookId : undefined)
  if (!script || !webhookId) {
    console.error('[parley] embed.js needs a data-webhook-id attribute: <script src=".../webchat/embed.js" data-webhook-id="…"></script>')
    return
  }
  const fromJson = sanitizeWebchatConfig(json)
  for (const key of SERVER_ONLY_KEYS) delete fromJson[key]
  /** What this embed says: it wins over the bot's settings, and goes to the page in its URL. */
  const overrides: WebchatConfig = { ...fromJson, ...webchatOverrides((key) => script.dataset[key]) }
  /** The bot's public settings (fetched below) under the overrides: what the launcher shows. */
  let settings: WebchatConfig = overrides
  const base = new URL('.', script.src)
  const page = new URL(encodeURIComponent(webhookId), base)
  page.searchParams.set('embed', '1')
  if (script.dataset.title) page.searchParams.set('title', script.dataset.title)
  for (const key of WEBCHAT_CONFIG_KEYS) {
    const value = overrides[key]
    if (value !== undefined) page.searchParams.set(key, String(value))
  }

  const style = (el: HTMLElement, css: Record<string, string>) => {
    for (const [key, value] of Object.entries(css)) el.style.setProperty(key, value)
  }
  /** Visually hidden, still read by screen readers. */
  const SR_ONLY = { position: 'absolute', width: '1px', height: '1px', overflow: 'hidden', clip: 'rect(0 0 0 0)', 'white-space': 'nowrap' }
  const title = () => script.dataset.title || settings.botName || 'Chat'
  const side = () => (settings.launcherPosition === 'left' ? 'left' : 'right')

  const container = document.createElement('div')
  container.className = 'parley-webchat-embed'
  style(container, { position: 'fixed', bottom: '16px', 'z-index': '2147483000', 'font-family': 'system-ui, sans-serif' })

  const panelId = `parley-webchat-panel-${Math.random().toString(36).slice(2, 8)}`
  const launcher = document.createElement('button')
  launcher.type = 'button'
  launcher.setAttribute('aria-expanded', 'false')
  launcher.setAttribute('aria-controls', panelId)
  style(launcher, {
    position: 'relative', 'border-radius': '999px', border: '0', padding: '12px 18px', 'font-size': '16px',
    cursor: 'pointer', 'box-shadow': '0 4px 16px rgba(0,0,0,.25)', 'min-height': '44px',
  })
  // The unread badge: the count is in the button's accessible name, the badge itself is only seen.
  const badge = document.createElement('span')
  badge.className = 'parley-webchat-badge'
  badge.setAttribute('aria-hidden', 'true')
  badge.hidden = true
  style(badge, {
    position: 'absolute', top: '-6px', right: '-6px', 'min-width': '22px', height: '22px', padding: '0 6px',
    'box-sizing': 'border-box', 'border-radius': '11px', 'font-size': '13px', 'font-weight': '700', 'line-height': '22px',
    'text-align': 'center', 'box-shadow': '0 0 0 2px #fff',
  })
  // The count in words, for the button's accessible name (from its content: "Ask Ada (2 unread messages)"; an
  // aria-label would hide the badge's visible digits from the name, which axe flags).
  const unreadName = document.createElement('span')
  style(unreadName, SR_ONLY)
  // Said once by screen readers when the count changes (the button's name alone is not announced).
  const announce = document.createElement('span')
  announce.setAttribute('role', 'status')
  style(announce, SR_ONLY)

  /** Message ids that arrived while the panel was closed. */
  const unread = new Set<string>()
  const label = () => settings.launcherLabel || script.dataset.label || 'Chat with us'

  /** The launcher's picture, kept across renders (the badge changes often). */
  let icon: HTMLImageElement | undefined
  /** Draws the launcher from the current settings and unread count (again when the bot's settings arrive). */
  const render = () => {
    const accent = settings.primaryColor ?? '#2b59c3'
    const badgeColour = settings.launcherBadgeColor ?? '#c5221f'
    const count = unread.size
    if (settings.launcherIconUrl && icon?.src !== settings.launcherIconUrl) {
      icon = document.createElement('img')
      icon.src = settings.launcherIconUrl
      icon.alt = ''
      icon.referrerPolicy = 'no-referrer'
      style(icon, { width: '24px', height: '24px', 'vertical-align': 'middle', 'margin-right': '8px', 'border-radius': '50%' })
    }
    launcher.replaceChildren(...(settings.launcherIconUrl && icon ? [icon] : []), document.createTextNode(label()))
    badge.textContent = count === 0 ? '' : count > 99 ? '99+' : String(count)
    badge.hidden = count === 0
    unreadName.textContent = count > 0 ? `(${count} unread message${count === 1 ? '' : 's'})` : ''
    launcher.append(badge, unreadName)
    launcher.dataset.unread = String(count)
    style(launcher, { background: accent, color: readableOn(accent) })
    style(badge, { background: badgeColour, color: readableOn(badgeColour) })
    container.style.removeProperty(side() === 'left' ? 'right' : 'left')
    style(container, { [side()]: '16px' })
    panel.setAttribute('aria-label', title())
    if (frame) frame.title = title()
    layout()
  }
  const setUnreadAnnouncement = () => {
    const count = unread.size
    announce.textContent = count > 0 ? `${count} unread message${count === 1 ? '' : 's'} in the chat` : ''
  }

  const panel = document.createElement('div')
  panel.id = panelId
  panel.hidden = true
  panel.setAttribute('role', 'dialog')
  const narrow = window.matchMedia('(max-width: 480px)')
  function layout(): void {
    panel.style.removeProperty(side() === 'left' ? 'right' : 'left')
    style(panel, narrow.matches
      ? { position: 'fixed', inset: '0', width: '100vw', height: '100dvh', 'border-radius': '0' }
      : { position: 'absolute', inset: 'auto', [side()]: '0', bottom: '60px', width: '380px', height: 'min(640px, calc(100vh - 100px))', 'border-radius': '12px' })
  }
  narrow.addEventListener('change', layout)
  style(panel, { overflow: 'hidden', background: '#fff', 'box-shadow': '0 8px 32px rgba(0,0,0,.3)' })

  let frame: HTMLIFrameElement | undefined
  render()
  const ensureFrame = () => {
    if (frame) return frame
    frame = document.createElement('iframe')
    frame.src = page.href
    frame.title = title()
    frame.setAttribute('allow', 'clipboard-write')
    style(frame, { border: '0', width: '100%', height: '100%', display: 'block' })
    panel.appendChild(frame)
    return frame
  }

  const open = () => {
    ensureFrame()
    panel.hidden = false
    if (unread.size > 0) {
      unread.clear()
      render()
      setUnreadAnnouncement()
    }
    launcher.setAttribute('aria-expanded', 'true')
    if (narrow.matches) launcher.hidden = true
    frame?.focus()
  }
  const close = () => {
    panel.hidden = true
    launcher.hidden = false
    launcher.setAttribute('aria-expanded', 'false')
    launcher.focus()
  }
  const toggle = () => (panel.hidden ? open() : close())

  launcher.addEventListener('click', toggle)
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !panel.hidden) close()
  })
  window.addEventListener('message', (event: MessageEvent) => {
    const data = event.data !== null && typeof event.data === 'object' ? (event.data as { type?: unknown; id?: unknown }) : undefined
    if (event.origin !== page.origin || event.source !== frame?.contentWindow) return
    if (data?.type === 'parley:close') close()
    const id = data?.id
    if (data?.type === 'parley:message' && typeof id === 'string' && id.length <= 200 && panel.hidden && unread.size < 1000) {
      unread.add(id)
      render()
      setUnreadAnnouncement()
    }
  })

  container.append(panel, launcher, announce)
  let mounted = false
  const mount = () => {
    if (mounted) return
    mounted = true
    if (document.body) document.body.appendChild(container)
    else document.addEventListener('DOMContentLoaded', () => document.body.appendChild(container))
  }

  // The bot's public settings (colour, icon, name, launcher), read cross-origin from Parley (GET
  // /{webhookId}/webchat of the Chat API answers any origin, without credentials). The launcher waits for them a
  // moment so it does not flash in the default colour; without them (a host CSP's connect-src, a network
  // error) it shows what the snippet says.
  const controller = typeof AbortController === 'function' ? new AbortController() : undefined
  const abort = setTimeout(() => controller?.abort(), 10_000)
  const giveUp = setTimeout(mount, 1500)
  /** Whether the bot's settings were read. */
  const fetchSettings = async (): Promise<boolean> => {
    try {
      const response = await fetch(new URL(`../${encodeURIComponent(webhookId)}/webchat`, base).href, {
        credentials: 'omit', referrerPolicy: 'no-referrer', ...(controller && { signal: controller.signal }),
      })
      if (!response.ok) return false
      const body = (await response.json()) as { webchat?: unknown } | null
      const webchat = body?.webchat
      if (!webchat || typeof webchat !== 'object' || Array.isArray(webchat)) return false
      const bot = sanitizeWebchatConfig(webchat as Record<string, unknown>)
      for (const key of SERVER_ONLY_KEYS) delete bot[key]
      settings = { ...bot, ...overrides }
      render()
      return true
    } catch {
      return false // the snippet's settings only
    }
  }
  void fetchSettings().then((loaded) => {
    clearTimeout(abort)
    clearTimeout(giveUp)
    // For tests and curious hosts: whether the launcher shows the bot's settings.
    container.dataset.settings = loaded ? 'bot' : 'snippet'
    mount()
  })
  if (script.dataset.open === 'true') open()
  ;(window as unknown as { ParleyWebchat: unknown }).ParleyWebchat = { open, close, toggle }
})()
