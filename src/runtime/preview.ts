/**
 * `previewOf(payload)`: the plain-text form of a message payload — the spec's `event.preview` ("for a text message
 * it is the message text", a sensible text for every other payload type).
 *
 * The function is stringified and injected into the bot sandbox (see prelude-contract.ts `PreludeHelpers`), so it
 * is SELF-CONTAINED: no imports, no references to anything outside its own body except standard built-ins; every
 * helper is nested inside it. It also runs on the server with untrusted input, so every regular expression below is
 * linear (negated character classes that exclude their own delimiters; anchored per-line patterns), never
 * backtracking-prone.
 */
export function previewOf(payload: unknown): string {
  const JSON_MAX = 500

  type Rec = Record<string, unknown>
  const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v)
  const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== ''

  function compactJson(v: unknown): string {
    let s: string | undefined
    try {
      s = JSON.stringify(v)
    } catch {
      s = undefined
    }
    if (s === undefined) s = v === undefined ? '' : String(v)
    return s.length > JSON_MAX ? s.slice(0, JSON_MAX - 1) + '…' : s
  }

  function decodeEntities(s: string): string {
    if (s.indexOf('&') < 0) return s
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }
    return s.replace(/&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,6});/g, (whole: string, ent: string) => {
      if (ent[0] === '#') {
        const code = ent[1] === 'x' || ent[1] === 'X' ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10)
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
      }
      const hit = named[ent.toLowerCase()]
      return hit === undefined ? whole : hit
    })
  }

  /** Markdown → plain text: keeps the words, drops the markup. */
  function stripMarkdown(md: string): string {
    const tokens: string[] = []
    const keep = (text: string) => '\uE000' + (tokens.push(text) - 1) + '\uE001'

    function inline(line: string): string {
      let s = line
      // Backslash escapes and code spans are protected from the emphasis rules.
      s = s.replace(/\\([\\`*_{}[\]()#+\-.!~|<>])/g, (_m: string, c: string) => keep(c))
      s = s.replace(/`([^`\n]+)`/g, (_m: string, code: string) => keep(code))
      s = s.replace(/<((?:https?|ftp|mailto):[^<>\s]+)>/gi, (_m: string, url: string) => keep(url))
      s = s.replace(/!\[([^[\]\n]*)\]\([^()\n]*\)/g, '$1') // images → alt text
      s = s.replace(/\[([^[\]\n]*)\]\([^()\n]*\)/g, '$1') // inline links → link text
      s = s.replace(/\[([^[\]\n]+)\]\[[^[\]\n]*\]/g, '$1') // reference links → link text
      s = s.replace(/<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/g, '') // inline HTML tags
      s = s.replace(/\*\*([^*\n]+)\*\*/g, '$1')
      s = s.replace(/__([^_\n]+)__/g, '$1')
      s = s.replace(/~~([^~\n]+)~~/g, '$1')
      s = s.replace(/\*([^*\n]+)\*/g, '$1')
      s = s.replace(/(^|[^A-Za-z0-9_])_([^_\n]+)_(?![A-Za-z0-9_])/g, '$1$2')
      return s
    }

    const out: string[] = []
    let fence: string | null = null
    for (const raw of md.split(/\r\n|\r|\n/)) {
      const trimmed = raw.trim()
      if (fence !== null) {
        if (trimmed.startsWith(fence)) fence = null
        else out.push(raw)
        continue
      }
      if (trimmed.startsWith('```') || trimmed.startsWith('~~~')) {
        fence = trimmed.slice(0, 3)
        continue
      }
      const bare = trimmed.replace(/[ \t]/g, '')
      if (bare.length >= 3 && /^(?:-+|\*+|_+|=+)$/.test(bare)) continue // rules and setext underlines
      if (bare.includes('|') && bare.includes('-') && bare.replace(/[|:-]/g, '') === '') continue // table separators
      if (/^ {0,3}\[[^[\]\n]+\]:/.test(raw)) continue // reference definitions
      let line = raw
      const heading = /^ {0,3}#{1,6}(?:[ \t]+|$)/.exec(line)
      if (heading) {
        // Closing hashes ("## Title ##"), removed with string operations (a regex here could backtrack on long blanks).
        line = line.slice(heading[0].length).trimEnd()
        let end = line.length
        while (end > 0 && line[end - 1] === '#') end--
        if (end === 0) line = ''
        else if (end < line.length && (line[end - 1] === ' ' || line[end - 1] === '\t')) line = line.slice(0, end).trimEnd()
      }
      line = line.replace(/^(?: {0,3}>[ \t]?)+/, '') // blockquotes
      line = line.replace(/^[ \t]*[-*+][ \t]+(?:\[[ xX]\][ \t]+)?/, '') // bullets (and task boxes)
      out.push(inline(line))
    }
    const text = out
      .join('\n')
      .replace(/\uE000(\d+)\uE001/g, (whole: string, i: string) => {
        const t = tokens[Number(i)]
        return t === undefined ? whole : t
      })
      .replace(/\n{3,}/g, '\n\n')
      .trim()
    return decodeEntities(text)
  }

  function media(kind: string, url: unknown): string | undefined {
    return nonEmpty(url) ? '[' + kind + '] ' + url : undefined
  }

  function labelsOf(list: unknown): string[] {
    if (!Array.isArray(list)) return []
    const labels: string[] = []
    for (const item of list) if (isRec(item) && nonEmpty(item.label)) labels.push(item.label)
    return labels
  }

  function cardPreview(card: Rec): string | undefined {
    const head = [card.title, card.subtitle].filter(nonEmpty).join(' - ')
    const labels = labelsOf(card.actions)
    if (head === '' && labels.length === 0) return undefined
    if (labels.length === 0) return head
    return (head === '' ? '' : head + ' ') + '(' + labels.join(', ') + ')'
  }

  function preview(p: unknown, depth: number): string {
    if (!isRec(p) || typeof p.type !== 'string' || depth > 4) return compactJson(p)
    let text: string | undefined
    switch (p.type) {
      case 'text':
        text = typeof p.text === 'string' ? p.text : undefined
        break
      case 'markdown':
        text = typeof p.markdown === 'string' ? stripMarkdown(p.markdown) : undefined
        break
      case 'image':
        text = media('image', p.imageUrl)
        break
      case 'audio':
        text = media('audio', p.audioUrl)
        break
      case 'video':
        text = media('video', p.videoUrl)
        break
      case 'file':
        text = nonEmpty(p.title) ? '[file] ' + p.title : media('file', p.fileUrl)
        break
      case 'location':
        if (nonEmpty(p.address)) text = p.address
        else if (nonEmpty(p.title)) text = p.title
        else if (typeof p.latitude === 'number' && typeof p.longitude === 'number') text = p.latitude + ', ' + p.longitude
        break
      case 'card':
        text = cardPreview(p)
        break
      case 'carousel':
        if (Array.isArray(p.items)) {
          const titles: string[] = []
          for (const item of p.items) if (isRec(item) && nonEmpty(item.title)) titles.push(item.title)
          text = titles.length > 0 ? titles.join(', ') : '[carousel]'
        }
        break
      case 'choice':
      case 'dropdown':
        if (typeof p.text === 'string') {
          const labels = labelsOf(p.options)
          text = labels.length > 0 ? p.text + ' (' + labels.join(', ') + ')' : p.text
        }
        break
      case 'bloc':
        if (Array.isArray(p.items)) {
          text = p.items.map((item: unknown) => preview(item, depth + 1)).filter((s: string) => s !== '').join('\n')
          if (text === '') text = '[bloc]'
        }
        break
    }
    return text === undefined ? compactJson(p) : text
  }

  return preview(payload, 0)
}
