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
 * opened, an iframe of `/webchat/{webhookId}`. Styles are set through the CSSOM, so a host page's CSP that forbids
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
  const settings: WebchatConfig = { ...fromJson, ...webchatOverrides((key) => script.dataset[key]) }
  const title = script.dataset.title || settings.botName
  const page = new URL(encodeURIComponent(webhookId), new URL('.', script.src))
  page.searchParams.set('embed', '1')
  if (script.dataset.title) page.searchParams.set('title', script.dataset.title)
  for (const key of WEBCHAT_CONFIG_KEYS) {
    const value = settings[key]
    if (value !== undefined) page.searchParams.set(key, String(value))
  }
  const label = settings.launcherLabel || script.dataset.label || 'Chat with us'
  const accent = settings.primaryColor ?? '#2b59c3'
  const side = settings.launcherPosition === 'left' ? 'left' : 'right'

  const style = (el: HTMLElement, css: Record<string, string>) => {
    for (const [key, value] of Object.entries(css)) el.style.setProperty(key, value)
  }

  const container = document.createElement('div')
  container.className = 'parley-webchat-embed'
  style(container, { position: 'fixed', [side]: '16px', bottom: '16px', 'z-index': '2147483000', 'font-family': 'system-ui, sans-serif' })

  const panelId = `parley-webchat-panel-${Math.random().toString(36).slice(2, 8)}`
  const launcher = document.createElement('button')
  launcher.type = 'button'
  if (settings.launcherIconUrl) {
    const icon = document.createElement('img')
    icon.src = settings.launcherIconUrl
    icon.alt = ''
    icon.referrerPolicy = 'no-referrer'
    style(icon, { width: '24px', height: '24px', 'vertical-align': 'middle', 'margin-right': '8px', 'border-radius': '50%' })
    launcher.appendChild(icon)
  }
  launcher.appendChild(document.createTextNode(label))
  launcher.setAttribute('aria-expanded', 'false')
  launcher.setAttribute('aria-controls', panelId)
  style(launcher, {
    'border-radius': '999px', border: '0', padding: '12px 18px', background: accent, color: readableOn(accent), 'font-size': '16px',
    cursor: 'pointer', 'box-shadow': '0 4px 16px rgba(0,0,0,.25)', 'min-height': '44px',
  })

  const panel = document.createElement('div')
  panel.id = panelId
  panel.hidden = true
  panel.setAttribute('role', 'dialog')
  panel.setAttribute('aria-label', title || 'Chat')
  const narrow = window.matchMedia('(max-width: 480px)')
  const layout = () => {
    style(panel, narrow.matches
      ? { position: 'fixed', inset: '0', width: '100vw', height: '100dvh', 'border-radius': '0' }
      : { position: 'absolute', [side]: '0', bottom: '60px', width: '380px', height: 'min(640px, calc(100vh - 100px))', 'border-radius': '12px' })
  }
  layout()
  narrow.addEventListener('change', layout)
  style(panel, { overflow: 'hidden', background: '#fff', 'box-shadow': '0 8px 32px rgba(0,0,0,.3)' })

  let frame: HTMLIFrameElement | undefined
  const ensureFrame = () => {
    if (frame) return frame
    frame = document.createElement('iframe')
    frame.src = page.href
    frame.title = title || 'Chat'
    frame.setAttribute('allow', 'clipboard-write')
    style(frame, { border: '0', width: '100%', height: '100%', display: 'block' })
    panel.appendChild(frame)
    return frame
  }

  const open = () => {
    ensureFrame()
    panel.hidden = false
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
    const data = event.data as { type?: unknown } | null
    if (event.origin === page.origin && event.source === frame?.contentWindow && data?.type === 'parley:close') close()
  })

  container.append(panel, launcher)
  const mount = () => document.body.appendChild(container)
  if (document.body) mount()
  else document.addEventListener('DOMContentLoaded', mount)
  if (script.dataset.open === 'true') open()
  ;(window as unknown as { ParleyWebchat: unknown }).ParleyWebchat = { open, close, toggle }
})()
