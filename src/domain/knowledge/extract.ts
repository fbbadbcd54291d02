import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type { NewPassage, PassageSubtype } from '../../store/knowledge-store.js'
import { parseDelimited } from '../../lib/csv.js'
import { htmlToMarkdown } from './html.js'
import { layoutBlocks, type PdfItem, type PdfPage } from './pdf-layout.js'

export { htmlToMarkdown }

/**
 * Text extraction and passage splitting for indexed files. Supported: plain text, Markdown, HTML, JSON,
 * CSV (and TSV) and PDF (unpdf, a pure-JavaScript build of pdf.js). Work is cut in slices with a yield to
 * the event loop between them, so a large file never holds the server for long.
 */

export class ExtractionError extends Error {}

/** Above this many characters of text a file is not indexed (indexing_failed with this reason). */
export const MAX_INDEXED_CHARS = 20_000_000
const TARGET_CHARS = 700
const MAX_CHARS = 1200
const SHORT_CHARS = 200
const SLICE_LINES = 2000

export type TextKind = 'text' | 'markdown' | 'html' | 'json' | 'csv' | 'tsv' | 'pdf'

export function kindOf(contentType: string, key: string): TextKind | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  const ext = key.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1]
  if (type === 'application/pdf' || ext === 'pdf') return 'pdf'
  if (type === 'text/markdown' || type === 'text/x-markdown' || ext === 'md' || ext === 'markdown') return 'markdown'
  if (type === 'text/html' || type === 'application/xhtml+xml' || ext === 'html' || ext === 'htm') return 'html'
  if (type === 'application/json' || type.endsWith('+json') || ext === 'json') return 'json'
  if (type === 'text/csv' || ext === 'csv') return 'csv'
  if (type === 'text/tab-separated-values' || ext === 'tsv') return 'tsv'
  if (type.startsWith('text/') || ext === 'txt') return 'text'
  return undefined
}

interface Block { title: string; text: string; subtype: PassageSubtype; pageNumber?: number | undefined }

const decode = (bytes: Uint8Array) => new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '').replaceAll('\u0000', '')

/** The file's passages, in document order. Throws ExtractionError with a user-facing reason. */
export async function extractPassages(bytes: Uint8Array, contentType: string, key: string): Promise<NewPassage[]> {
  const kind = kindOf(contentType, key)
  if (!kind) throw new ExtractionError(`Content type ${contentType} cannot be indexed (supported: text, Markdown, HTML, JSON, CSV, PDF)`)
  const name = key.split(/[\\/]/).pop() ?? key
  let blocks: Block[]
  if (kind === 'pdf') blocks = await pdfBlocks(bytes, name)
  else {
    const text = decode(bytes)
    if (text.length > MAX_INDEXED_CHARS) throw new ExtractionError(`The file has more than ${MAX_INDEXED_CHARS} characters of text`)
    if (kind === 'json') blocks = await jsonBlocks(text, name)
    else if (kind === 'csv' || kind === 'tsv') blocks = await tableBlocks(text, kind === 'csv' ? ',' : '\t', name)
    else blocks = await markdownBlocks(kind === 'html' ? await htmlToMarkdown(text) : text, name)
  }
  return packPassages(blocks)
}

/** Paragraphs of Markdown (or plain text): headings become the title of the blocks below them. */
async function markdownBlocks(text: string, docTitle: string, pageNumber?: number): Promise<Block[]> {
  const lines = text.split(/\r?\n/)
  const blocks: Block[] = []
  const headings: string[] = []
  let paragraph: string[] = []
  let inCode = false
  const title = () => [docTitle, ...headings.filter(Boolean)].join(' › ')
  const flush = () => {
    const body = paragraph.join('\n').trim()
    if (body) {
      const subtype: PassageSubtype = inCode ? 'code' : /^\s*([-*+]|\d+[.)])\s/.test(body) ? 'list' : body.startsWith('>') ? 'blockquote' : body.startsWith('|') ? 'table' : 'paragraph'
      blocks.push({ title: title(), text: body, subtype, pageNumber })
    }
    paragraph = []
  }
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % SLICE_LINES === 0) await yieldToLoop()
    const line = lines[i]!
    if (/^\s*(```|~~~)/.test(line)) {
      flush()
      inCode = !inCode
      continue
    }
    // Anchored and without nested quantifiers: linear even on a hostile line.
    const heading = inCode ? null : /^(#{1,6})[ \t]+(.*)$/.exec(line)
    if (heading) {
      flush()
      const level = heading[1]!.length
      const text = heading[2]!.trim().replace(/[ \t]#+$/, '').trim()
      headings.length = level - 1
      headings[level - 1] = text
      if (level === 1 && headings.length === 1) docTitle = text, headings.length = 0
      continue
    }
    if (line.trim() === '' && !inCode) flush()
    else paragraph.push(line)
  }
  flush()
  return blocks
}

async function jsonBlocks(text: string, docTitle: string): Promise<Block[]> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ExtractionError('The file is not valid JSON')
  }
  // One block per top-level entry (or array item): its leaves as "path: value" lines.
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : value !== null && typeof value === 'object' ? Object.entries(value) : [['', value]]
  const blocks: Block[] = []
  for (let i = 0; i < entries.length; i++) {
    if (i > 0 && i % 500 === 0) await yieldToLoop()
    const [k, v] = entries[i]!
    const lines: string[] = []
    const walk = (path: string, x: unknown, depth: number) => {
      if (depth > 20 || lines.length > 5000) return
      if (x !== null && typeof x === 'object') for (const [ck, cv] of Object.entries(x)) walk(path ? `${path}.${ck}` : ck, cv, depth + 1)
      else if (x !== null && x !== undefined && x !== '') lines.push(path ? `${path}: ${String(x)}` : String(x))
    }
    walk('', v, 0)
    if (lines.length) blocks.push({ title: k && !/^\d+$/.test(k) ? `${docTitle} › ${k}` : docTitle, text: lines.join('\n'), subtype: 'paragraph' })
  }
  return blocks
}

/** One block per row, each value labelled by its column header. */
async function tableBlocks(text: string, sep: string, docTitle: string): Promise<Block[]> {
  const rows = parseDelimited(text, sep)
  const header = rows.shift() ?? []
  const blocks: Block[] = []
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % SLICE_LINES === 0) await yieldToLoop()
    const cells = rows[i]!.map((v, j) => (header[j] ? `${header[j]!.trim()}: ${v.trim()}` : v.trim())).filter((c) => !c.endsWith(': '))
    blocks.push({ title: docTitle, text: cells.join('; '), subtype: 'table' })
  }
  return blocks
}

async function pdfBlocks(bytes: Uint8Array, docTitle: string): Promise<Block[]> {
  const { getDocumentProxy } = await import('unpdf')
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>
  try {
    // pdf.js takes ownership of (and may detach) the buffer: give it a copy.
    doc = await getDocumentProxy(new Uint8Array(bytes))
  } catch (err) {
    throw new ExtractionError(`The PDF could not be read: ${(err as Error).message}`)
  }
  const pages: PdfPage[] = []
  let chars = 0
  try {
    const meta = await doc.getMetadata().catch(() => undefined)
    const title = (meta?.info as { Title?: unknown } | undefined)?.Title
    if (typeof title === 'string' && title.trim()) docTitle = title.trim()
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n)
      const content = await page.getTextContent()
      const items: PdfItem[] = []
      for (const item of content.items) {
        if (!('str' in item)) continue
        const [, , c, d, x, y] = item.transform as number[]
        items.push({ str: item.str, x: x ?? 0, y: y ?? 0, size: Math.hypot(c ?? 0, d ?? 0) || item.height || 0, width: item.width, eol: item.hasEOL })
        chars += item.str.length
      }
      if (chars > MAX_INDEXED_CHARS) throw new ExtractionError(`The file has more than ${MAX_INDEXED_CHARS} characters of text`)
      pages.push({ items })
      page.cleanup()
      await yieldToLoop()
    }
  } finally {
    await doc.destroy().catch(() => {})
  }
  const blocks = layoutBlocks(pages)
  await yieldToLoop()
  return blocks.map((b) => ({ title: [docTitle, ...b.headings].join(' › '), text: b.text, subtype: 'page' as const, pageNumber: b.pageNumber }))
}

/** Merges small blocks under the same title up to ~TARGET_CHARS, splits long ones at sentence ends. */
function packPassages(blocks: Block[]): NewPassage[] {
  const out: NewPassage[] = []
  let current: Block | undefined
  const push = (b: Block) => out.push({ position: out.length, title: b.title, content: b.text, meta: { subtype: b.subtype, ...(b.pageNumber !== undefined && { pageNumber: b.pageNumber }) } })
  for (const block of blocks) {
    for (const piece of splitLong(block.text)) {
      const b = { ...block, text: piece }
      // Same heading: packed up to TARGET_CHARS, and a short tail (a command, a last list item) joins its
      // neighbour up to MAX_CHARS rather than standing alone (a PDF passage stays on one page).
      const size = current ? current.text.length + b.text.length : 0
      if (current && current.title === b.title && current.pageNumber === b.pageNumber && (size < TARGET_CHARS || (b.text.length < SHORT_CHARS && size < MAX_CHARS))) {
        current = { ...current, text: `${current.text}\n\n${b.text}`, subtype: current.subtype === b.subtype ? current.subtype : 'paragraph' }
      } else {
        if (current) push(current)
        current = b
      }
    }
  }
  if (current) push(current)
  return out
}

function splitLong(text: string): string[] {
  if (text.length <= MAX_CHARS) return [text]
  const sentences = text.match(/[^.!?\n]+(?:[.!?]+|\n|$)\s*/g) ?? [text]
  const pieces: string[] = []
  let piece = ''
  for (const s of sentences) {
    for (let i = 0; i < s.length; i += MAX_CHARS) {
      const part = s.slice(i, i + MAX_CHARS)
      if (piece.length + part.length > TARGET_CHARS && piece) pieces.push(piece.trim()), piece = ''
      piece += part
    }
  }
  if (piece.trim()) pieces.push(piece.trim())
  return pieces
}
