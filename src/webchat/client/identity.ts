/// <reference lib="dom" />
import { sanitizeWebchatConfig, themeVariables, webchatOverrides, type WebchatConfig } from '../shared/webchat-config.js'

/**
 * The bot's webchat settings on the page: the server's (the root's data-config, from the Admin API), then the
 * overrides of the page's URL (`?botName=…&primaryColor=…`, which embed.js fills from its data-* attributes;
 * `?title=` is the older name of botName). Bad overrides are dropped.
 */
export function pageWebchatConfig(root: HTMLElement, search: URLSearchParams): WebchatConfig {
  let server: Record<string, unknown> = {}
  try {
    const parsed = JSON.parse(root.dataset.config ?? '{}') as unknown
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) server = parsed as Record<string, unknown>
  } catch {
    // a broken attribute: the defaults
  }
  const title = search.get('title')
  const overrides = webchatOverrides((key) => search.get(key) ?? (key === 'botName' && title ? title.slice(0, 80) : null))
  return { ...sanitizeWebchatConfig(server), ...overrides }
}

/** Applies the settings: theme variables and light/dark through the CSSOM, the header's identity, the composer. */
export function applyWebchatConfig(config: WebchatConfig): void {
  const html = document.documentElement
  html.dataset.theme = config.themeMode ?? 'auto'
  for (const [name, value] of Object.entries(themeVariables(config))) html.style.setProperty(name, value)
  const title = document.getElementById('pw-title')
  if (config.botName) {
    if (title) title.textContent = config.botName
    document.title = config.botName
  }
  const avatar = document.getElementById('pw-avatar') as HTMLImageElement | null
  if (avatar && config.botAvatarUrl) {
    avatar.src = config.botAvatarUrl
    avatar.hidden = false
  }
  const description = document.getElementById('pw-description')
  if (description && config.botDescription) {
    description.textContent = config.botDescription
    description.hidden = false
  }
  const input = document.getElementById('pw-input') as HTMLTextAreaElement | null
  if (input && config.composerPlaceholder) input.placeholder = config.composerPlaceholder
}
