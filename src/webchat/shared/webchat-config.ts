/**
 * A bot's webchat configuration: its identity (name, avatar, description), its look (colour, font, radius,
 * light/dark), its composer placeholder and its launcher. Stored with the bot (Admin API: `webchat` of
 * createBot/updateBot, or `integrations.chat.configuration.webchat`), answered by getBotWebchat's snippets,
 * applied by the webchat page, and overridable per embed (data-* attributes of embed.js, query of the page).
 *
 * Shared by the server (which refuses a bad value with a 400 naming the field) and the browser (which drops a bad
 * override): one set of rules. Pure code: no DOM, no Node.
 */

export interface WebchatConfig {
  botName?: string
  /** http(s) URL of the bot's avatar picture. */
  botAvatarUrl?: string
  botDescription?: string
  /** `#rgb` or `#rrggbb`: buttons, the user's bubbles, the launcher. */
  primaryColor?: string
  /** A CSS font-family list of plain names: letters, digits, spaces, hyphens, commas, quotes. */
  fontFamily?: string
  /** Corner radius of bubbles and cards, in px (0 to 32). */
  radius?: number
  themeMode?: 'light' | 'dark' | 'auto'
  composerPlaceholder?: string
  /** Text of embed.js's launcher button. */
  launcherLabel?: string
  /** http(s) URL of a picture shown in the launcher button, before its label. */
  launcherIconUrl?: string
  launcherPosition?: 'right' | 'left'
  /** `#rgb` or `#rrggbb`: the launcher's unread-message badge (its text is black or white, whichever contrasts more). */
  launcherBadgeColor?: string
  /**
   * File upload by the user: the allowed content types, comma-separated (`image/*`, `application/pdf`…); unset: no
   * upload. Server policy: never taken from an embed's overrides.
   */
  uploadTypes?: string
  /** The largest file a user may upload, in bytes (also bounded by PARLEY_MAX_FILE_BYTES); default 10 MiB. */
  uploadMaxBytes?: number
}

export type WebchatConfigKey = keyof WebchatConfig

type Rule = (value: unknown) => string | undefined

const text = (max: number): Rule => (value) =>
  typeof value !== 'string' ? 'must be a string'
  : value.trim() === '' ? 'must not be empty'
  : value.length > max ? `must be at most ${max} characters`
  // eslint-disable-next-line no-control-regex
  : /[\u0000-\u001f\u007f]/.test(value) ? 'must not contain control characters'
  : undefined

const MAX_URL = 2048
const httpUrl: Rule = (value) => {
  if (typeof value !== 'string') return 'must be a string'
  if (value.length > MAX_URL) return `must be at most ${MAX_URL} characters`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute http: or https: URL'
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'must be an absolute http: or https: URL'
}

const oneOf = (...values: string[]): Rule => (value) =>
  typeof value === 'string' && values.includes(value) ? undefined : `must be one of ${values.map((v) => `"${v}"`).join(', ')}`

const hexColour: Rule = (value) =>
  typeof value === 'string' && /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(value) ? undefined : 'must be a hex colour: #rgb or #rrggbb'

/** The validation rule of each key (the keys of this object are the configuration's keys). */
export const WEBCHAT_CONFIG_RULES: Record<WebchatConfigKey, Rule> = {
  botName: text(80),
  botAvatarUrl: httpUrl,
  botDescription: text(500),
  primaryColor: hexColour,
  fontFamily: (value) =>
    typeof value === 'string' && value.length <= 200 && /^[A-Za-z0-9 ,'"-]+$/.test(value) && value.trim() !== ''
      ? undefined
      : 'must be a font-family list of at most 200 characters (letters, digits, spaces, hyphens, commas, quotes)',
  radius: (value) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 32 ? undefined : 'must be an integer from 0 to 32 (px)'),
  themeMode: oneOf('light', 'dark', 'auto'),
  composerPlaceholder: text(120),
  launcherLabel: text(40),
  launcherIconUrl: httpUrl,
  launcherPosition: oneOf('right', 'left'),
  launcherBadgeColor: hexColour,
  uploadTypes: (value) => {
    if (typeof value !== 'string' || value.length > 1000) return 'must be a comma-separated list of content types (at most 1000 characters)'
    const types = value.split(',').map((t) => t.trim())
    if (types.length > 20 || types.some((t) => !/^[a-z0-9][a-z0-9!#$&^_.+-]{0,62}\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126})$/i.test(t))) {
      return 'must be a comma-separated list of at most 20 content types such as image/*, image/png or application/pdf'
    }
    return undefined
  },
  uploadMaxBytes: (value) => (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 1_073_741_824 ? undefined : 'must be an integer number of bytes from 1 to 1073741824'),
}

/** Settings only the bot's owner sets (Admin API): embeds and page URLs cannot override them. */
export const SERVER_ONLY_KEYS: readonly WebchatConfigKey[] = ['uploadTypes', 'uploadMaxBytes']

/** The settings anyone may read (the page, embed.js, the public settings endpoint): all but the server's policy. */
export function publicWebchatConfig(config: WebchatConfig): WebchatConfig {
  const out: WebchatConfig = { ...config }
  for (const key of SERVER_ONLY_KEYS) delete out[key]
  return out
}

/** The default of uploadMaxBytes. */
export const DEFAULT_UPLOAD_MAX_BYTES = 10 * 1024 * 1024

/** Whether `contentType` is one of `uploadTypes` (`type/*` matches the whole type). */
export function uploadTypeAllowed(uploadTypes: string | undefined, contentType: string): boolean {
  if (!uploadTypes) return false
  const wanted = contentType.split(';')[0]!.trim().toLowerCase()
  return uploadTypes.split(',').map((t) => t.trim().toLowerCase()).some((t) => (t.endsWith('/*') ? wanted.startsWith(t.slice(0, -1)) : wanted === t))
}

export const WEBCHAT_CONFIG_KEYS = Object.keys(WEBCHAT_CONFIG_RULES) as WebchatConfigKey[]

const isKey = (key: string): key is WebchatConfigKey => Object.prototype.hasOwnProperty.call(WEBCHAT_CONFIG_RULES, key)

/** Why `value` is refused for `key` (a sentence), or undefined when it is fine. Unknown keys are refused. */
export function webchatConfigProblem(key: string, value: unknown): string | undefined {
  if (!isKey(key)) return `is not a webchat setting (settings: ${WEBCHAT_CONFIG_KEYS.join(', ')})`
  return WEBCHAT_CONFIG_RULES[key](value)
}

/**
 * The valid entries of `input` (unknown keys and bad values dropped): what the browser keeps of the overrides it
 * is given. Strings that stand for numbers (query strings, data attributes) are read as numbers for `radius`.
 */
export function sanitizeWebchatConfig(input: Record<string, unknown>): WebchatConfig {
  const out: Record<string, unknown> = {}
  for (const [key, raw] of Object.entries(input)) {
    if (!isKey(key) || raw === undefined || raw === null) continue
    const value = key === 'radius' && typeof raw === 'string' && /^\d{1,2}$/.test(raw) ? Number(raw) : raw
    if (WEBCHAT_CONFIG_RULES[key](value) === undefined) out[key] = value
  }
  return out as WebchatConfig
}

/** The settings an embed or a page URL may carry, read from a string map (dataset, URLSearchParams). */
export function webchatOverrides(get: (key: WebchatConfigKey) => string | null | undefined): WebchatConfig {
  const raw: Record<string, unknown> = {}
  for (const key of WEBCHAT_CONFIG_KEYS) {
    if (SERVER_ONLY_KEYS.includes(key)) continue
    const value = get(key)
    if (value !== null && value !== undefined && value !== '') raw[key] = value
  }
  return sanitizeWebchatConfig(raw)
}

/** `botName` → `bot-name`: the data-* attribute name of a key in embed snippets. */
export function dataAttributeOf(key: WebchatConfigKey): string {
  return `data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
}

/**
 * The page's theme as CSS custom properties (set through the CSSOM on the page's root element; the CSP allows no
 * inline style). Only validated values reach here.
 */
export function themeVariables(config: WebchatConfig): Record<string, string> {
  const vars: Record<string, string> = {}
  if (config.primaryColor) {
    vars['--pw-accent'] = config.primaryColor
    vars['--pw-mine'] = config.primaryColor
    vars['--pw-accent-text'] = readableOn(config.primaryColor)
    vars['--pw-mine-text'] = readableOn(config.primaryColor)
  }
  if (config.fontFamily) vars['--pw-font'] = config.fontFamily
  if (config.radius !== undefined) vars['--pw-radius'] = `${config.radius}px`
  return vars
}

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
export function readableOn(hex: string): string {
  const full = hex.length === 4 ? `#${hex[1]}${hex[1]}${hex[2]}${hex[2]}${hex[3]}${hex[3]}` : hex
  const channel = (i: number) => {
    const c = parseInt(full.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  const l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
  // Contrast with white: 1.05 / (l + 0.05); with black: (l + 0.05) / 0.05.
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? '#ffffff' : '#000000'
}
