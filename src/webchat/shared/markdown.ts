import { safeUrl } from './payload.js'

/**
 * A small Markdown parser that produces a tree, never HTML. The webchat turns the tree into DOM nodes with
 * `textContent` and checked attributes, so raw HTML in a message (`<script>`, `<img onerror>`) is only ever text,
 * and links and images keep only http(s)/mailto/tel URLs.
 *
 * Supported: paragraphs (single newlines are line breaks), ATX headings, bullet (dash, star, plus) and numbered lists, block
 * quotes, fenced code, thematic breaks; inline code, **strong**, *emphasis* and _emphasis_, ~~strikethrough~~,
 * [links](url), ![images](url), <autolinks> and bare http(s) URLs, backslash escapes.
 */

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'strong' | 'em' | 'del'; c: Inline[] }
  | { t: 'code'; v: string }
  | { t: 'link'; href: string | undefined; c: Inline[] }
  | { t: 'img'; src: string | undefined; alt: string }
  | { t: 'br' }

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'ul'; items: Inline[][] }
  | { t: 'ol'; start: number; items: Inline[][] }
  | { t: 'quote'; c: Block[] }
  | { t: 'pre'; v: string }
  | { t: 'hr' }

/** Longer sources are shown as plain text (parsing stays linear-ish, but a chat bubble has no use for more). */
export const MAX_MARKDOWN_LENGTH = 20_000
const MAX_DEPTH = 6

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const QUOTE = /^ {0,3}>[ ]?(.*)$/
const BULLET = /^ {0,3}[-*+][ \t]+(.*)$/
const ORDERED = /^ {0,3}(\d{1,9})[.)][ \t]+(.*)$/

const startsBlock = (line: string) => FENCE.test(line) || HR.test(line) || HEADING.test(line) || QUOTE.test(line) || BULLET.test(line) || ORDERED.test(line)

export function parseMarkdown(source: string): Block[] {
  const text = source.length > MAX_MARKDOWN_LENGTH ? source.slice(0, MAX_MARKDOWN_LENGTH) + '…' : source
  return parseBlocks(text.replace(/\r\n?/g, '\n').split('\n'), 0)
}

function parseBlocks(lines: string[], depth: number): Block[] {
  const blocks: Block[] = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    if (line.trim() === '') {
      i++
      continue
    }
    const fence = FENCE.exec(line)
    if (fence) {
      const marker = fence[1]!
      const body: string[] = []
      i++
      while (i < lines.length && !(lines[i]!.trim().startsWith(marker) && lines[i]!.trim().replace(/[`~]/g, '') === '')) body.push(lines[i++]!)
      i++ // closing fence (or end)
      blocks.push({ t: 'pre', v: body.join('\n') })
      continue
    }
    if (HR.test(line)) {
      blocks.push({ t: 'hr' })
      i++
      continue
    }
    const heading = HEADING.exec(line)
    if (heading) {
      blocks.push({ t: 'h', level: heading[1]!.length, c: parseInline(heading[2] ?? '', depth) })
      i++
      continue
    }
    if (QUOTE.test(line)) {
      const inner: string[] = []
      while (i < lines.length && QUOTE.test(lines[i]!)) inner.push(QUOTE.exec(lines[i++]!)![1]!)
      blocks.push(depth >= MAX_DEPTH ? { t: 'p', c: [{ t: 'text', v: inner.join('\n') }] } : { t: 'quote', c: parseBlocks(inner, depth + 1) })
      continue
    }
    const ordered = ORDERED.exec(line)
    if (BULLET.test(line) || ordered) {
      const pattern = ordered ? ORDERED : BULLET
      const items: string[] = []
      while (i < lines.length) {
        const current = lines[i]!
        const item = pattern.exec(current)
        if (item) {
          items.push(ordered ? item[2]! : item[1]!)
          i++
        } else if (current.trim() !== '' && /^[ \t]/.test(current) && items.length > 0 && !startsBlock(current.trimStart())) {
          items[items.length - 1] += '\n' + current.trim()
          i++
        } else break
      }
      const parsed = items.map((item) => parseInline(item, depth))
      blocks.push(ordered ? { t: 'ol', start: Number(ordered[1]), items: parsed } : { t: 'ul', items: parsed })
      continue
    }
    const paragraph: string[] = [line.trim()]
    i++
    while (i < lines.length && lines[i]!.trim() !== '' && !startsBlock(lines[i]!)) paragraph.push(lines[i++]!.trim())
    blocks.push({ t: 'p', c: parseInline(paragraph.join('\n'), depth) })
  }
  return blocks
}

const PUNCTUATION = /[!-/:-@[-`{-~]/
const WORD = /[\p{L}\p{N}]/u

/** Plain text of inline nodes (image alt text, labels). */
export function inlineText(nodes: Inline[]): string {
  return nodes.map((n) => ('v' in n ? n.v : 'c' in n ? inlineText(n.c) : n.t === 'img' ? n.alt : n.t === 'br' ? '\n' : '')).join('')
}

export function parseInline(s: string, depth = 0): Inline[] {
  const out: Inline[] = []
  let buffer = ''
  const flush = () => {
    if (buffer) out.push({ t: 'text', v: buffer })
    buffer = ''
  }
  if (depth > MAX_DEPTH) return s ? [{ t: 'text', v: s }] : []
  /** Positions from which a delimiter is known to have no valid closer (any later search fails too). */
  const noCloserFrom = new Map<string, number>()

  const findCloser = (delim: string, from: number): number => {
    const known = noCloserFrom.get(delim)
    if (known !== undefined && from >= known) return -1
    let at = s.indexOf(delim, from)
    while (at >= 0) {
      const before = s[at - 1]
      const after = s[at + delim.length]
      const ok =
        at > from && before !== undefined && !/\s/.test(before) &&
        (delim[0] !== '_' || after === undefined || !WORD.test(after)) &&
        // a single * or _ must not be half of a double one
        (delim.length > 1 || (after !== delim && before !== delim))
      if (ok) return at
      at = s.indexOf(delim, at + 1)
    }
    noCloserFrom.set(delim, from)
    return -1
  }

  /** `[label](url)` starting at `open` (the `[`): the label, the url and the index after `)`. */
  const link = (open: number): { label: string; url: string; end: number } | undefined => {
    let level = 0
    let close = -1
    for (let j = open; j < s.length && j < open + 2000; j++) {
      const c = s[j]
      if (c === '\\') j++
      else if (c === '[') level++
      else if (c === ']' && --level === 0) {
        close = j
        break
      }
    }
    if (close < 0 || s[close + 1] !== '(') return undefined
    const end = s.indexOf(')', close + 2)
    if (end < 0) return undefined
    const target = s.slice(close + 2, end).trim().split(/\s+/)[0] ?? ''
    return { label: s.slice(open + 1, close), url: target.replace(/^<(.*)>$/, '$1'), end: end + 1 }
  }

  let i = 0
  while (i < s.length) {
    const ch = s[i]!
    if (ch === '\\' && i + 1 < s.length && PUNCTUATION.test(s[i + 1]!)) {
      buffer += s[i + 1]
      i += 2
      continue
    }
    if (ch === '\n') {
      flush()
      out.push({ t: 'br' })
      i++
      continue
    }
    if (ch === '`') {
      let n = 1
      while (s[i + n] === '`') n++
      const fence = '`'.repeat(n)
      const known = noCloserFrom.get(fence)
      let close = known !== undefined && i + n >= known ? -1 : s.indexOf(fence, i + n)
      while (close >= 0 && s[close + n] === '`') close = s.indexOf(fence, close + n + 1)
      if (close < 0) {
        noCloserFrom.set(fence, i + n)
        buffer += fence
        i += n
        continue
      }
      flush()
      out.push({ t: 'code', v: s.slice(i + n, close).replace(/\n/g, ' ') })
      i = close + n
      continue
    }
    if ((ch === '!' && s[i + 1] === '[') || ch === '[') {
      const at = ch === '!' ? i + 1 : i
      const parsed = link(at)
      if (parsed) {
        flush()
        if (ch === '!') out.push({ t: 'img', src: safeUrl(parsed.url, 'media'), alt: inlineText(parseInline(parsed.label, depth + 1)) })
        else out.push({ t: 'link', href: safeUrl(parsed.url), c: parseInline(parsed.label, depth + 1) })
        i = parsed.end
        continue
      }
    }
    if (ch === '<') {
      const auto = /^<((?:https?|mailto):[^\s<>]+)>/.exec(s.slice(i, i + 2100))
      if (auto) {
        flush()
        out.push({ t: 'link', href: safeUrl(auto[1]), c: [{ t: 'text', v: auto[1]! }] })
        i += auto[0].length
        continue
      }
    }
    if (ch === 'h' && (i === 0 || /[\s(]/.test(s[i - 1]!)) && (s.startsWith('http://', i) || s.startsWith('https://', i))) {
      const bare = /^https?:\/\/[^\s<>]+/.exec(s.slice(i, i + 2100))
      if (bare) {
        const url = bare[0].replace(/[.,;:!?)'"\]]+$/, '')
        if (url.length > 'https://'.length) {
          flush()
          out.push({ t: 'link', href: safeUrl(url), c: [{ t: 'text', v: url }] })
          i += url.length
          continue
        }
      }
    }
    if (ch === '*' || ch === '_' || ch === '~') {
      let n = 1
      while (s[i + n] === ch) n++
      const leftOk = ch !== '_' || i === 0 || !WORD.test(s[i - 1]!)
      const next = s[i + Math.min(n, 2)]
      if (leftOk && next !== undefined && !/\s/.test(next)) {
        const kinds: Array<['strong' | 'em' | 'del', string]> =
          ch === '~' ? (n >= 2 ? [['del', '~~']] : []) : n >= 2 ? [['strong', ch + ch], ['em', ch]] : [['em', ch]]
        let matched = false
        for (const [kind, delim] of kinds) {
          const start = i + delim.length
          const close = findCloser(delim, start)
          if (close > start) {
            flush()
            out.push({ t: kind, c: parseInline(s.slice(start, close), depth + 1) })
            i = close + delim.length
            matched = true
            break
          }
        }
        if (matched) continue
      }
      buffer += s.slice(i, i + n)
      i += n
      continue
    }
    buffer += ch
    i++
  }
  flush()
  return out
}
