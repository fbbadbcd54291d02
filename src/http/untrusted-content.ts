import type { FastifyReply } from 'fastify'
import { isMimeType } from '../domain/file-service.js'

/**
 * Serving bytes that Parley does not write itself: a file's content (Files API download URLs, webchat and handoff
 * uploads), an integration's answer on its webhookUrl, the demo assets, a conversation export. None of them may
 * ever be active content on Parley's origin, where the console's session lives (issue #24): every route that
 * sends such bytes goes through `serveUntrusted`, which sets
 * - `Content-Security-Policy: sandbox` (no script, form, plugin or popup; an opaque origin, so no cookie and no
 *   same-origin request) with `default-src 'none'`; the document's own image and media stay allowed, so a picture,
 *   a recording or a video opened on its own still shows and plays;
 * - `X-Content-Type-Options: nosniff` and a Content-Type that is a MIME type: a missing or malformed one becomes
 *   application/octet-stream (a browser sniffs those, nosniff or not);
 * - `Content-Disposition: inline` only for the passive types of INLINE_TYPES (raster images, audio, video, PDF,
 *   plain text, CSV, JSON); every other type, HTML, SVG, XML and JavaScript among them, is `attachment`, so a
 *   browser that navigates to it downloads it. The Content-Type itself is kept: API clients read it, and an SVG in
 *   an `<img>` runs no script;
 * - `Cross-Origin-Resource-Policy` (cross-origin for what other sites embed, such as a webchat's pictures;
 *   same-origin otherwise) and `Referrer-Policy: no-referrer`.
 * With `relayed` (an integration's answer), only the RELAYED_HEADERS of the answer are copied (an allowlist: no
 * Set-Cookie, CORS, CSP, Link, Refresh, WWW-Authenticate or custom header), and the CORS headers Parley's own
 * plugin added are removed: no site reads a relayed answer with a visitor's credentials.
 */
export const UNTRUSTED_CSP = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"

/** Types a browser displays without running anything: served inline (exact essences, or a whole `type/`). */
const INLINE_TYPES = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/x-icon', 'image/vnd.microsoft.icon',
  'application/pdf', 'text/plain', 'text/csv', 'application/json',
])
const INLINE_KINDS = ['audio/', 'video/']

/** An integration's answer headers that are relayed (an allowlist; Content-Type is checked separately). */
export const RELAYED_HEADERS = ['cache-control', 'content-language', 'etag', 'expires', 'last-modified', 'location', 'retry-after'] as const

export interface UntrustedBytes {
  /** The type the owner of the bytes declared (a file's contentType, an integration's Content-Type header). */
  contentType: string | undefined
  /** The name offered for saving (Content-Disposition's filename). */
  fileName?: string
  /** Always `attachment`, whatever the type (an export). */
  attachment?: boolean
  /** Other sites may embed it (CORP cross-origin): content shown by the webchat on any site. */
  embeddable: boolean
  /** An outside service's answer headers: only RELAYED_HEADERS are copied, and no CORS header is sent. */
  relayed?: Record<string, string>
}

/** A MIME type Parley serves as is, or application/octet-stream. */
export function servedType(contentType: string | undefined): string {
  const type = contentType?.trim()
  return type && isMimeType(type) ? type : 'application/octet-stream'
}

/** Whether a browser may display this type inline (see INLINE_TYPES). */
export function isInlineType(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase()
  return INLINE_TYPES.has(essence) || INLINE_KINDS.some((kind) => essence.startsWith(kind))
}

/** Sets the headers above on `reply` (the caller sends the body, with its own status, length and caching). */
export function serveUntrusted(reply: FastifyReply, bytes: UntrustedBytes): FastifyReply {
  if (bytes.relayed) {
    for (const name of Object.keys(reply.getHeaders())) if (name.startsWith('access-control-')) reply.removeHeader(name)
    for (const name of RELAYED_HEADERS) {
      const value = bytes.relayed[name]
      if (value !== undefined) reply.header(name, value)
    }
  }
  const type = servedType(bytes.contentType)
  const disposition = !bytes.attachment && isInlineType(type) ? 'inline' : 'attachment'
  return reply
    .header('content-type', type)
    .header('content-disposition', bytes.fileName === undefined ? disposition : contentDisposition(bytes.fileName, disposition))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', UNTRUSTED_CSP)
    .header('cross-origin-resource-policy', bytes.embeddable ? 'cross-origin' : 'same-origin')
    .header('referrer-policy', 'no-referrer')
}

/** RFC 3986 unreserved characters stay; everything else, including RFC 5987's excluded `'()*`, is %-encoded. */
function rfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * `Content-Disposition` for a file key or name (RFC 6266): its last path segment as `filename*=UTF-8''…`
 * (percent-encoded, so CR/LF/quotes can never reach the header), plus an ASCII-only `filename="…"` fallback for old
 * clients.
 */
export function contentDisposition(key: string, type: 'inline' | 'attachment' = 'inline'): string {
  const base = key.split(/[\\/]/).filter(Boolean).pop() ?? ''
  const name = base.toWellFormed().replace(/[\u0000-\u001f\u007f-\u009f]/g, '') || 'file'
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%;]/g, '_')
  return `${type}; filename="${fallback}"; filename*=UTF-8''${rfc5987(name)}`
}
