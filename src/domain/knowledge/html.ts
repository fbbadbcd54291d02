import { setImmediate as yieldToLoop } from 'node:timers/promises'

/**
 * HTML to Markdown for indexing: a tolerant tree built in one linear scan (indexOf, no backtracking regular
 * expressions; nesting capped), then rendered with the page's boilerplate left out — navigation, menus,
 * headers and footers (by element, ARIA role, or class/id), forms, and link lists (a block whose text is
 * mostly links: tables of contents, menus). Headings become Markdown headings; so do FAQ-style pseudo
 * headings (a paragraph that is only bold text, a long or question-like definition term), so the answer
 * under them keeps the question as its heading path. Definition lists read "term: definition", table rows
 * "header: cell; header: cell", preformatted text stays a fenced block.
 */

interface Node { tag: string; attrs: string; children: (Node | string)[] }

const VOID = new Set(['br', 'img', 'hr', 'input', 'meta', 'link', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr', 'param'])
const RAW_TEXT = new Set(['script', 'style', 'noscript', 'template', 'svg', 'textarea', 'math', 'iframe', 'object'])
const SKIP = new Set(['nav', 'aside', 'form', 'button', 'select', 'option', 'label', 'dialog', 'menu'])
const BLOCKS = new Set(['p', 'div', 'section', 'article', 'main', 'header', 'footer', 'ul', 'ol', 'table', 'tr', 'blockquote', 'pre', 'dl', 'dt', 'dd', 'body', 'html', 'figure', 'figcaption', 'address', 'details', 'summary', 'li', 'center', 'caption', 'thead', 'tbody', 'tfoot', 'hr', 'fieldset'])
/** Opening one of these closes an open element of the listed names (implied end tags). */
const CLOSES: Record<string, string[]> = { li: ['li'], dt: ['dt', 'dd'], dd: ['dt', 'dd'], tr: ['tr', 'td', 'th'], td: ['td', 'th'], th: ['td', 'th'], p: ['p'], option: ['option'] }
const MAX_DEPTH = 200
const BOILERPLATE_CLASS = /(?:^|[\s_-])(?:nav|navbar|navheader|navfooter|navigation|menu|mainmenu|submenu|menubar|footer|breadcrumbs?|sidebar|toc|skip|cookies?|banner|searchmenu|nosearch)(?:$|[\s_-])/i
const BOILERPLATE_ROLE = /\brole\s*=\s*["']?(?:navigation|banner|contentinfo|search|menu|menubar)\b/i

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', rsquo: '’', lsquo: '‘', ldquo: '“', rdquo: '”', copy: '©', euro: '€', reg: '®', trade: '™', laquo: '«', raquo: '»', middot: '·', bull: '•', eacute: 'é', egrave: 'è', agrave: 'à', ccedil: 'ç', uuml: 'ü', ouml: 'ö', auml: 'ä', szlig: 'ß' }

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ''
    }
    return ENTITIES[e.toLowerCase()] ?? m
  })
}

/** The element tree, and the <title> text. */
async function parse(html: string): Promise<{ root: Node; title: string | undefined }> {
  const lower = html.toLowerCase()
  const root: Node = { tag: '#root', attrs: '', children: [] }
  const stack: Node[] = [root]
  let title: string | undefined
  let at = 0
  let tags = 0
  const top = () => stack[stack.length - 1]!
  const text = (t: string) => {
    if (t) top().children.push(t)
  }
  while (at < html.length) {
    const open = html.indexOf('<', at)
    if (open < 0) {
      text(html.slice(at))
      break
    }
    text(html.slice(at, open))
    if (++tags % 5000 === 0) await yieldToLoop()
    if (html.startsWith('<!--', open)) {
      const end = html.indexOf('-->', open + 4)
      if (end < 0) break
      at = end + 3
      continue
    }
    const close = html.indexOf('>', open + 1)
    if (close < 0) break // an unterminated tag: the rest is not text
    const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(open, Math.min(close + 1, open + 40)))
    at = close + 1
    if (!m) continue
    const name = m[2]!.toLowerCase()
    if (m[1] === '/') {
      // Close the nearest open element of that name (an end tag with no open element is ignored).
      for (let i = stack.length - 1; i > 0 && i >= stack.length - 50; i--) {
        if (stack[i]!.tag === name) {
          stack.length = i
          break
        }
      }
      continue
    }
    if (RAW_TEXT.has(name) || name === 'title') {
      const end = lower.indexOf(`</${name}`, at)
      if (name === 'title' && title === undefined) title = decodeEntities(html.slice(at, end < 0 ? at : end)).replace(/\s+/g, ' ').trim()
      if (end < 0) break
      const gt = html.indexOf('>', end)
      at = gt < 0 ? html.length : gt + 1
      continue
    }
    const implied = CLOSES[name]
    if (implied) {
      // Implied end tags, not beyond the nearest list or table that contains them.
      for (let i = stack.length - 1; i > 0 && i >= stack.length - 6; i--) {
        const tag = stack[i]!.tag
        if (implied.includes(tag)) {
          stack.length = i
          break
        }
        if (tag === 'ul' || tag === 'ol' || tag === 'dl' || tag === 'table' || tag === 'tr') break
      }
    }
    const attrs = close - open > 2000 ? '' : html.slice(open + m[0].length, close)
    const node: Node = { tag: name, attrs, children: [] }
    top().children.push(node)
    if (!VOID.has(name) && !attrs.endsWith('/') && stack.length < MAX_DEPTH) stack.push(node)
  }
  return { root, title }
}

function attr(node: Node, name: string): string {
  const m = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'i').exec(node.attrs)
  return m ? (m[1] ?? m[2] ?? m[3] ?? '') : ''
}

function isBoilerplate(node: Node): boolean {
  if (SKIP.has(node.tag) || RAW_TEXT.has(node.tag)) return true
  if (node.tag === 'input' || node.tag === 'img' || node.tag === 'hr') return true
  if ((node.tag === 'header' || node.tag === 'footer') && !hasHeading(node, 0)) return true
  if (!node.attrs) return false
  if (BOILERPLATE_ROLE.test(node.attrs)) return true
  return BOILERPLATE_CLASS.test(`${attr(node, 'class')} ${attr(node, 'id')}`)
}

function hasHeading(node: Node, depth: number): boolean {
  if (depth > 20) return false
  return node.children.some((c) => typeof c !== 'string' && (/^h[1-6]$/.test(c.tag) || hasHeading(c, depth + 1)))
}

/** Visible text of a node, whitespace collapsed. */
function inline(node: Node | string, depth = 0): string {
  if (typeof node === 'string') return decodeEntities(node).replace(/\s+/g, ' ')
  if (depth > MAX_DEPTH || isBoilerplate(node)) return node.tag === 'img' ? '' : ''
  if (node.tag === 'br') return ' '
  const inner = node.children.map((c) => inline(c, depth + 1)).join('')
  return BLOCKS.has(node.tag) || node.tag === 'td' || node.tag === 'th' ? ` ${inner} ` : inner
}

/** [characters inside links, all characters, links] of a node's visible text. */
function linkDensity(node: Node, depth = 0): [number, number, number] {
  let linked = 0
  let total = 0
  let links = 0
  for (const c of node.children) {
    if (typeof c === 'string') {
      total += c.replace(/\s+/g, '').length
      continue
    }
    if (depth > 50 || isBoilerplate(c)) continue
    if (c.tag === 'a' && attr(c, 'href')) {
      const n = inline(c).replace(/\s+/g, '').length
      linked += n
      total += n
      links++
      continue
    }
    const [l, t, k] = linkDensity(c, depth + 1)
    linked += l
    total += t
    links += k
  }
  return [linked, total, links]
}

/** A block made of links (a table of contents, a menu): at least 3 links and 3/4 of its text linked. */
function isLinkList(node: Node): boolean {
  if (!['ul', 'ol', 'dl', 'table', 'div', 'p', 'section', 'td'].includes(node.tag)) return false
  const [linked, total, links] = linkDensity(node)
  return links >= 3 && linked >= 0.75 * total
}

/** The text of a paragraph that holds only bold text (a pseudo heading), else undefined. */
function boldOnly(node: Node): string | undefined {
  const parts = node.children.filter((c) => typeof c !== 'string' || c.trim() !== '')
  if (parts.length !== 1) return undefined
  let only = parts[0]!
  if (typeof only !== 'string' && only.tag === 'a' && only.children.length === 1) only = only.children[0]!
  if (typeof only === 'string' || !['b', 'strong'].includes(only.tag)) return undefined
  const text = inline(only).trim()
  return text.length >= 3 && text.length <= 250 ? text : undefined
}

class Renderer {
  private readonly out: string[] = []
  /** Level of the last real heading (pseudo headings go one below it). */
  private level = 0

  block(s: string): void {
    this.out.push(`\n\n${s}\n\n`)
  }

  heading(level: number, text: string): void {
    const t = text.replace(/\s+/g, ' ').trim()
    if (t) this.block(`${'#'.repeat(Math.min(Math.max(level, 1), 6))} ${t}`)
  }

  pseudoHeading(text: string): void {
    this.heading(Math.min(this.level + 1, 6), text)
  }

  render(node: Node | string, depth = 0): void {
    if (typeof node === 'string') {
      this.out.push(decodeEntities(node).replace(/\s+/g, ' '))
      return
    }
    if (depth > MAX_DEPTH || isBoilerplate(node)) return
    const tag = node.tag
    if (/^h[1-6]$/.test(tag)) {
      this.level = Number(tag[1])
      this.heading(this.level, inline(node))
      return
    }
    if (isLinkList(node)) return
    switch (tag) {
      case 'br':
        this.out.push('\n')
        return
      case 'pre':
        this.block(`\`\`\`\n${decodeEntities(rawText(node)).replace(/^\n+|\s+$/g, '')}\n\`\`\``)
        return
      case 'li':
        this.out.push('\n- ')
        for (const c of node.children) this.render(c, depth + 1)
        return
      case 'table':
        this.table(node)
        return
      case 'dt': {
        const term = inline(node).trim()
        if (term.endsWith('?') || term.length > 60) this.pseudoHeading(term)
        else if (term) this.out.push(`\n\n${term.replace(/:$/, '')}: `)
        return
      }
      case 'dd':
        for (const c of node.children) this.render(c, depth + 1)
        this.out.push('\n\n')
        return
      case 'p':
      case 'div': {
        const bold = boldOnly(node)
        if (bold) {
          this.pseudoHeading(bold)
          return
        }
      }
    }
    const isBlock = BLOCKS.has(tag)
    if (isBlock) this.out.push('\n\n')
    else if (tag !== 'a' && tag !== 'span' && tag !== 'b' && tag !== 'i' && tag !== 'em' && tag !== 'strong' && tag !== 'code' && tag !== 'tt') this.out.push(' ')
    for (const c of node.children) this.render(c, depth + 1)
    if (isBlock) this.out.push('\n\n')
  }

  /** Rows of cells; with a header row, each cell labelled by its column header. */
  private table(node: Node): void {
    const rows: string[][] = []
    let header: string[] | undefined
    const walk = (n: Node, depth: number) => {
      if (depth > 20) return
      for (const c of n.children) {
        if (typeof c === 'string' || isBoilerplate(c)) continue
        if (c.tag === 'tr') {
          const cells = c.children.filter((x): x is Node => typeof x !== 'string' && (x.tag === 'td' || x.tag === 'th'))
          const texts = cells.map((x) => inline(x).replace(/\s+/g, ' ').trim())
          if (texts.every((t) => !t)) continue
          if (!header && rows.length === 0 && cells.length > 1 && cells.every((x) => x.tag === 'th')) header = texts
          else rows.push(texts)
        } else if (c.tag !== 'table') walk(c, depth + 1)
      }
    }
    walk(node, 0)
    const lines = rows.map((cells) => {
      const filled = cells.map((t, j) => (header?.[j] && t ? `${header[j]}: ${t}` : t)).filter(Boolean)
      return filled.join(header ? '; ' : ' | ')
    })
    if (lines.length) this.block(lines.join('\n'))
  }

  text(): string {
    return this.out.join('')
  }
}

function rawText(node: Node, depth = 0): string {
  if (depth > MAX_DEPTH) return ''
  return node.children.map((c) => (typeof c === 'string' ? c : c.tag === 'br' ? '\n' : rawText(c, depth + 1))).join('')
}

/** HTML as Markdown, boilerplate left out (see the file comment). */
export async function htmlToMarkdown(html: string): Promise<string> {
  const { root, title } = await parse(html)
  const r = new Renderer()
  r.render(root)
  await yieldToLoop()
  const s = r.text().replace(/[ \t\f\v\r]+/g, ' ').replace(/ *\n */g, '\n').replace(/\n-[ \n]*\n/g, '\n- ').replace(/\n{3,}/g, '\n\n').trim()
  return title && !/^# /m.test(s) ? `# ${title}\n\n${s}` : s
}
