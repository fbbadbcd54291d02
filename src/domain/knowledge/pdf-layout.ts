/**
 * Layout analysis of PDF text for indexing, on the positioned text items pdf.js gives (unpdf):
 * - lines rebuilt from items (same baseline), with their font size and left edge;
 * - running headers and footers dropped: the first or last line of a page, set apart from the body by a
 *   wide gap, at a position (or with a text, digits aside) that recurs on many pages; bare page numbers too;
 * - table-of-contents pages (dot leaders) dropped;
 * - headings from font size: lines clearly larger than the body text, levels by size, a heading wrapped
 *   over several lines joined; FAQ-style questions (a short paragraph ending with "?", or followed by an
 *   indented answer) become headings one level down, so answers keep their question as heading path;
 * - paragraphs from vertical gaps, first-line indents and bullets; words hyphenated at a line end joined;
 *   a paragraph cut by a page break continued.
 */

export interface PdfItem { str: string; x: number; y: number; size: number; width: number; eol: boolean }
export interface PdfPage { items: PdfItem[] }
export interface LayoutBlock { headings: string[]; text: string; pageNumber: number }

interface Line { text: string; x: number; y: number; size: number; page: number }

const round = (n: number) => Math.round(n * 2) / 2

function linesOf(page: PdfPage, pageIndex: number): Line[] {
  const lines: Line[] = []
  let cur: Line | undefined
  let lastEnd = 0
  let chars = new Map<number, number>()
  const finish = () => {
    if (cur && cur.text.trim()) {
      let best = cur.size
      let most = -1
      for (const [s, n] of chars) if (n > most || (n === most && s > best)) (best = s), (most = n)
      lines.push({ ...cur, text: cur.text.replace(/\s+/g, ' ').trim(), size: best })
    }
    cur = undefined
    chars = new Map()
  }
  for (const it of page.items) {
    const size = round(it.size)
    if (cur && Math.abs(it.y - cur.y) > Math.max(cur.size, size, 1) * 0.5) finish()
    if (!cur) {
      if (it.str.trim() === '') {
        if (it.eol) finish()
        continue
      }
      cur = { text: '', x: it.x, y: it.y, size, page: pageIndex }
      lastEnd = it.x
    }
    const gap = it.x - lastEnd
    if (cur.text && !/\s$/.test(cur.text) && !/^\s/.test(it.str) && gap > size * 0.15) cur.text += ' '
    cur.text += it.str
    if (it.str.trim()) chars.set(size, (chars.get(size) ?? 0) + it.str.length)
    lastEnd = it.x + it.width
    if (it.eol) finish()
  }
  finish()
  return lines
}

const LEADERS = /(?:\.\s*){4,}\s*[0-9ivxlc]*\s*$/i
const PAGE_NUMBER = /^(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:\/|of)\s*\d{1,4})?$/i
const mask = (s: string) => s.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ')

/** Most common value, weighted. */
function mode(weights: Map<number, number>): number {
  let best = 0
  let most = -1
  for (const [v, n] of weights) if (n > most) (best = v), (most = n)
  return best
}

export function layoutBlocks(pages: PdfPage[]): LayoutBlock[] {
  const perPage = pages.map((p, i) => linesOf(p, i + 1))
  const sizes = new Map<number, number>()
  for (const lines of perPage) for (const l of lines) sizes.set(l.size, (sizes.get(l.size) ?? 0) + l.text.length)
  const body = mode(sizes) || 10

  // Running headers and footers.
  const edgeY = new Map<string, number>()
  const edgeText = new Map<string, number>()
  const edges = (lines: Line[]) => {
    const out: [Line, 'top' | 'bottom', number][] = []
    if (lines.length < 2) return out
    const top = lines.reduce((a, b) => (b.y > a.y ? b : a))
    const bottom = lines.reduce((a, b) => (b.y < a.y ? b : a))
    const below = Math.max(...lines.filter((l) => l !== top).map((l) => l.y))
    const above = Math.min(...lines.filter((l) => l !== bottom).map((l) => l.y))
    out.push([top, 'top', top.y - below], [bottom, 'bottom', above - bottom.y])
    return out
  }
  for (const lines of perPage) {
    for (const [l, where] of edges(lines)) {
      const ky = `${where}:${Math.round(l.y)}`
      edgeY.set(ky, (edgeY.get(ky) ?? 0) + 1)
      const kt = `${where}:${mask(l.text)}`
      edgeText.set(kt, (edgeText.get(kt) ?? 0) + 1)
    }
  }
  const recurring = Math.max(3, Math.ceil(pages.length * 0.3))
  const dropped = new Set<Line>()
  for (const lines of perPage) {
    for (const [l, where, gap] of edges(lines)) {
      const apart = gap > body * 2
      const sameText = (edgeText.get(`${where}:${mask(l.text)}`) ?? 0) >= Math.min(recurring, 3) && pages.length >= 3
      const samePlace = (edgeY.get(`${where}:${Math.round(l.y)}`) ?? 0) >= recurring
      if ((apart && (samePlace || sameText)) || PAGE_NUMBER.test(l.text)) dropped.add(l)
    }
  }

  const kept: Line[] = []
  for (const lines of perPage) {
    const body = lines.filter((l) => !dropped.has(l))
    const leaders = body.filter((l) => LEADERS.test(l.text)).length
    if (leaders >= 5 && leaders >= body.length * 0.3) continue // a table-of-contents page
    kept.push(...body.filter((l) => !LEADERS.test(l.text)))
  }

  // Heading levels by size: sizes clearly above the body's, largest first.
  const headingSizes = [...new Set(kept.filter((l) => l.size > body * 1.12 && l.text.length <= 200 && /\p{L}/u.test(l.text)).map((l) => l.size))].sort((a, b) => b - a)
  const levelOf = (l: Line) => (l.size > body * 1.12 && l.text.length <= 200 && /\p{L}/u.test(l.text) ? Math.min(headingSizes.indexOf(l.size) + 1, 6) : 0)

  // Paragraphs.
  interface Para { lines: Line[]; level: number }
  const paras: Para[] = []
  let prev: Line | undefined
  for (const l of kept) {
    const level = levelOf(l)
    const last = paras[paras.length - 1]
    let joins = false
    if (last && prev) {
      if (level > 0 || last.level > 0) joins = level === last.level && prev.page === l.page && prev.y - l.y < l.size * 2.2 && level > 0
      else if (prev.page !== l.page) joins = !/[.!?:]["”’)]?$/.test(prev.text) && /^[\p{Ll}(]/u.test(l.text)
      else {
        const gap = prev.y - l.y
        const margin = Math.min(...last.lines.map((x) => x.x))
        joins = gap > 0 && gap < l.size * 1.65 && !/^[•◦▪‣∙·*–-]\s?/.test(l.text) && !(l.x > margin + l.size * 0.8 && /[.!?:]["”’)]?$/.test(prev.text))
      }
    }
    if (joins) last!.lines.push(l)
    else paras.push({ lines: [l], level })
    prev = l
  }

  const join = (lines: Line[]) => lines.reduce((acc, l) => {
    if (!acc) return l.text
    if (/\p{Ll}-$/u.test(acc) && /^\p{Ll}/u.test(l.text)) return acc.slice(0, -1) + l.text
    return `${acc} ${l.text}`
  }, '')

  const blocks: LayoutBlock[] = []
  const headings: string[] = []
  let lastLevel = 0
  for (let i = 0; i < paras.length; i++) {
    const p = paras[i]!
    const text = join(p.lines)
    if (p.level > 0) {
      headings.length = p.level - 1
      headings[p.level - 1] = text
      lastLevel = p.level
      continue
    }
    const next = paras[i + 1]
    const question = text.length <= 200 && p.lines.length <= 3 && next !== undefined && next.level === 0 &&
      (/\?["”’)]?$/.test(text) || (next.lines.length >= 2 && Math.min(...next.lines.slice(0, 3).map((l) => l.x)) > p.lines[0]!.x + p.lines[0]!.size && !/[:,;]$/.test(text) && next.lines[0]!.page === p.lines[0]!.page))
    if (question) {
      const level = Math.min(lastLevel + 1, 6)
      headings.length = level - 1
      headings[level - 1] = text
      continue
    }
    blocks.push({ headings: headings.filter(Boolean), text, pageNumber: p.lines[0]!.page })
  }
  return blocks
}
