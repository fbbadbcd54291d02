/**
 * Text extraction and passage splitting (src/domain/knowledge/extract.ts) for each supported format, plus
 * hostile inputs that would be quadratic with backtracking regular expressions (they must simply finish).
 */
import { describe, expect, it } from 'vitest'
import { ExtractionError, extractPassages, htmlToMarkdown, kindOf } from '../../src/domain/knowledge/extract.js'
import { makePdf } from './pdf.js'

const extract = (text: string | Buffer, contentType: string, key = 'doc') => extractPassages(typeof text === 'string' ? Buffer.from(text) : text, contentType, key)

describe('knowledge: extraction', () => {
  it('picks the format from the content type, else the extension', () => {
    expect(kindOf('application/pdf', 'x')).toBe('pdf')
    expect(kindOf('application/octet-stream', 'a/b.MD')).toBe('markdown')
    expect(kindOf('text/html; charset=utf-8', 'x')).toBe('html')
    expect(kindOf('application/vnd.api+json', 'x')).toBe('json')
    expect(kindOf('text/plain', 'x.csv')).toBe('csv')
    expect(kindOf('image/png', 'x.png')).toBeUndefined()
  })

  it('Markdown: headings become passage titles; paragraphs under one heading are packed together', async () => {
    const passages = await extract('# Guide\n\nIntro text.\n\n## Setup\n\nStep one.\n\nStep two.\n\n## Usage ##\n\n- a\n- b\n', 'text/markdown', 'guide.md')
    expect(passages.map((p) => [p.title, p.content])).toEqual([
      ['Guide', 'Intro text.'],
      ['Guide › Setup', 'Step one.\n\nStep two.'],
      ['Guide › Usage', '- a\n- b'],
    ])
    expect(passages.map((p) => p.position)).toEqual([0, 1, 2])
    expect(passages[2]!.meta.subtype).toBe('list')
  })

  it('HTML: scripts, styles and comments dropped, entities decoded, title used', async () => {
    const md = await htmlToMarkdown('<html><head><title>T &amp; C</title><style>p{}</style></head><body><!-- hidden --><h2>Fees</h2><p>5&nbsp;&euro; &lt;max&gt; &#8364;</p><script>alert(1)</script><ul><li>one<li>two</ul></body></html>')
    expect(md).toContain('# T & C')
    expect(md).toContain('## Fees')
    expect(md).toContain('<max> €')
    expect(md).toContain('- one\n- two')
    expect(md).not.toMatch(/alert|hidden|p\{\}/)
  })

  it('JSON and CSV: labelled values', async () => {
    const json = await extract('{"shipping": {"days": 3, "free": true}, "empty": {}}', 'application/json', 'faq.json')
    expect(json.map((p) => [p.title, p.content])).toEqual([['faq.json › shipping', 'days: 3\nfree: true']])
    const csv = await extract('name,price\n"Tea, green",3\n"Say ""hi""",4\n', 'text/csv', 'menu.csv')
    expect(csv.map((p) => p.content).join('\n')).toBe('name: Tea, green; price: 3\n\nname: Say "hi"; price: 4')
    await expect(extract('{nope', 'application/json')).rejects.toBeInstanceOf(ExtractionError)
  })

  it('PDF: text per page with page numbers; broken PDFs and unsupported types are ExtractionErrors', async () => {
    const passages = await extract(makePdf([['First page line.'], ['Second page line.']], 'Manual'), 'application/pdf', 'm.pdf')
    expect(passages.map((p) => [p.title, p.content, p.meta.pageNumber])).toEqual([['Manual', 'First page line.', 1], ['Manual', 'Second page line.', 2]])
    await expect(extract('%PDF-1.4 junk', 'application/pdf')).rejects.toBeInstanceOf(ExtractionError)
    await expect(extract('GIF89a', 'image/gif', 'x.gif')).rejects.toThrow(/cannot be indexed/)
  })

  it('long paragraphs are split at sentence ends into bounded passages', async () => {
    const sentence = 'This sentence is about forty-five characters. '
    const passages = await extract(sentence.repeat(200), 'text/plain')
    expect(passages.length).toBeGreaterThan(5)
    for (const p of passages) expect(p.content.length).toBeLessThanOrEqual(1200)
    expect(passages.map((p) => p.content).join(' ').replace(/\s+/g, ' ').trim()).toBe(sentence.repeat(200).trim())
  })

  it('hostile inputs finish (one linear pass): unclosed tags and comments, endless headings and brackets', async () => {
    const n = 200_000
    expect((await htmlToMarkdown('<p>kept</p>' + '<script'.repeat(n))).trim()).toBe('kept')
    expect((await htmlToMarkdown('<p>kept</p>' + '<!--'.repeat(n))).trim()).toBe('kept')
    expect(await htmlToMarkdown('a' + '<'.repeat(n) + 'x')).toBe('a')
    expect(await htmlToMarkdown('<h1>'.repeat(n) + 'x')).toContain('x')
    const md = await extract('# ' + ' '.repeat(n) + 'x' + ' #'.repeat(n), 'text/markdown')
    expect(md.length).toBe(0) // a heading alone has no body
    const deep = await extract('['.repeat(n) + '{' , 'application/json').catch((e: unknown) => e)
    expect(deep).toBeInstanceOf(ExtractionError)
  })
})
