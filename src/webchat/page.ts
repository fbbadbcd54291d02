/** The server-rendered shell of the webchat page. Every interpolated value goes through escapeHtml. */
import type { WebchatConfig } from './shared/webchat-config.js'

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/**
 * The page's Content-Security-Policy: scripts and styles only from our own bundle, network only to our own
 * origin (the Chat API), media from anywhere over http(s) (bots send image and video URLs), no plugins, no
 * forms posting elsewhere, and Trusted Types so no HTML string can ever reach a DOM sink. Framing is allowed
 * (embed.js puts the page in an iframe on other sites). The console's page has the same policy but cannot be framed.
 */
export function pageCsp(frameAncestors: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https: http: data: blob:",
    "media-src 'self' https: http: blob:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
    `frame-ancestors ${frameAncestors}`,
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ')
}

export const WEBCHAT_CSP = pageCsp('*')

export function webchatPage(options: { webhookId: string; assetVersion: string; title?: string; config?: WebchatConfig }): string {
  const id = escapeHtml(options.webhookId)
  const api = escapeHtml(`../${encodeURIComponent(options.webhookId)}`)
  const v = encodeURIComponent(options.assetVersion)
  const config = options.config ?? {}
  const title = escapeHtml(config.botName ?? options.title ?? 'Chat')
  // The bot's settings, applied by the script (colours, font and radius need the CSSOM: the CSP allows no inline style).
  const configJson = escapeHtml(JSON.stringify(config))
  const avatar = config.botAvatarUrl ? escapeHtml(config.botAvatarUrl) : ''
  const description = escapeHtml(config.botDescription ?? '')
  const placeholder = escapeHtml(config.composerPlaceholder ?? 'Type a message…')
  return `<!doctype html>
<html lang="en" data-theme="${escapeHtml(config.themeMode ?? 'auto')}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${title}</title>
<link rel="stylesheet" href="assets/webchat.css?v=${v}">
<script type="module" src="assets/webchat.js?v=${v}"></script>
</head>
<body>
<div class="pw-app" id="parley-webchat" data-webhook-id="${id}" data-api="${api}" data-config="${configJson}" data-state="loading">
  <a class="pw-sr-only pw-skip" href="#pw-input">Skip to message box</a>
  <header class="pw-header">
    <img id="pw-avatar" class="pw-avatar" alt="" referrerpolicy="no-referrer"${avatar ? ` src="${avatar}"` : ' hidden'}>
    <div class="pw-identity">
      <h1 id="pw-title">${title}</h1>
      <p id="pw-description" class="pw-description"${description ? '' : ' hidden'}>${description}</p>
    </div>
    <p id="pw-status" class="pw-status" role="status" aria-live="polite">Connecting…</p>
    <button type="button" id="pw-close" class="pw-close" aria-label="Close chat" hidden>×</button>
  </header>
  <div id="pw-log" class="pw-log" role="log" aria-live="polite" aria-relevant="additions" aria-label="Conversation" tabindex="0"></div>
  <p id="pw-error" class="pw-error" role="alert" hidden></p>
  <form id="pw-composer" class="pw-composer" autocomplete="off">
    <label for="pw-input" class="pw-sr-only">Message</label>
    <textarea id="pw-input" class="pw-input" rows="1" placeholder="${placeholder}" enterkeyhint="send" aria-describedby="pw-hint"></textarea>
    <span id="pw-hint" class="pw-sr-only">Enter sends, Shift+Enter adds a new line.</span>
    <button type="submit" id="pw-send" class="pw-send">Send</button>
  </form>
  <noscript><p class="pw-error">This chat needs JavaScript.</p></noscript>
</div>
</body>
</html>
`
}

export function notFoundPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chat not found</title></head>
<body><main><h1>Chat not found</h1><p>No bot with an enabled chat integration has this address. Check the link, or ask the bot's owner for the webchat address (<code>integrations.chat.webchatUrl</code> of the bot).</p></main></body></html>
`
}
