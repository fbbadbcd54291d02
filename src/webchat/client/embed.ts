/// <reference lib="dom" />
/**
 * Embeds a Parley webchat in any page:
 *
 *   <script src="https://parley.example.com/webchat/embed.js" data-webhook-id="…" async></script>
 *
 * Optional attributes: data-title (header text), data-open="true" (start open), data-label (launcher text).
 * Adds a launcher button and, when opened, an iframe of `/webchat/{webhookId}`. Styles are set through the CSSOM,
 * so a host page's CSP that forbids inline style attributes does not break it. `window.ParleyWebchat` has
 * open(), close() and toggle().
 */
;(() => {
  const script = document.currentScript as HTMLScriptElement | null
  const webhookId = script?.dataset.webhookId
  if (!script || !webhookId) {
    console.error('[parley] embed.js needs a data-webhook-id attribute: <script src=".../webchat/embed.js" data-webhook-id="…"></script>')
    return
  }
  const page = new URL(encodeURIComponent(webhookId), new URL('.', script.src))
  page.searchParams.set('embed', '1')
  if (script.dataset.title) page.searchParams.set('title', script.dataset.title)
  const label = script.dataset.label || 'Chat with us'

  const style = (el: HTMLElement, css: Record<string, string>) => {
    for (const [key, value] of Object.entries(css)) el.style.setProperty(key, value)
  }

  const container = document.createElement('div')
  container.className = 'parley-webchat-embed'
  style(container, { position: 'fixed', right: '16px', bottom: '16px', 'z-index': '2147483000', 'font-family': 'system-ui, sans-serif' })

  const panelId = `parley-webchat-panel-${Math.random().toString(36).slice(2, 8)}`
  const launcher = document.createElement('button')
  launcher.type = 'button'
  launcher.textContent = label
  launcher.setAttribute('aria-expanded', 'false')
  launcher.setAttribute('aria-controls', panelId)
  style(launcher, {
    'border-radius': '999px', border: '0', padding: '12px 18px', background: '#2b59c3', color: '#fff', 'font-size': '16px',
    cursor: 'pointer', 'box-shadow': '0 4px 16px rgba(0,0,0,.25)', 'min-height': '44px',
  })

  const panel = document.createElement('div')
  panel.id = panelId
  panel.hidden = true
  panel.setAttribute('role', 'dialog')
  panel.setAttribute('aria-label', script.dataset.title || 'Chat')
  const narrow = window.matchMedia('(max-width: 480px)')
  const layout = () => {
    style(panel, narrow.matches
      ? { position: 'fixed', inset: '0', width: '100vw', height: '100dvh', 'border-radius': '0' }
      : { position: 'absolute', right: '0', bottom: '60px', width: '380px', height: 'min(640px, calc(100vh - 100px))', 'border-radius': '12px' })
  }
  layout()
  narrow.addEventListener('change', layout)
  style(panel, { overflow: 'hidden', background: '#fff', 'box-shadow': '0 8px 32px rgba(0,0,0,.3)' })

  let frame: HTMLIFrameElement | undefined
  const ensureFrame = () => {
    if (frame) return frame
    frame = document.createElement('iframe')
    frame.src = page.href
    frame.title = script.dataset.title || 'Chat'
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
