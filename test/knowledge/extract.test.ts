/**
 * Text extraction and passage splitting (src/domain/knowledge/extract.ts) for each supported format, plus
 * hostile inputs that would be quadratic with backtracking regular expressions (they must simply finish).
 */
import { describe, expect, it } from 'vitest'
import { ExtractionError, extractPassages, htmlToMarkdown, kindOf } from '../../src/domain/knowledge/extract.js'
import { layoutBlocks, type PdfItem } from '../../src/domain/knowledge/pdf-layout.js'
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

  it('HTML boilerplate dropped: nav, menus by class/role, header/footer, forms, link lists (tables of contents)', async () => {
    const html = `<html><head><title>Guide</title></head><body>
      <div class="menu mainmenu"><ul><li><a href="/">Home</a><li><a href="/docs">Docs</a><li><a href="/buy">Buy</a></ul></div>
      <nav>Skip to content</nav><header><img src="logo.png" alt="logo">Acme Inc.</header>
      <div role="navigation">Prev | Next</div><form><input name="q"><button>Search</button></form>
      <h2>Contents</h2><ol><li><a href="#a">Setup</a></li><li><a href="#b">Usage</a></li><li><a href="#c">Limits</a></li></ol>
      <h2>Setup</h2><p>Install the <a href="x">tool</a> with the package manager of your system.</p>
      <div id="footer">Copyright 2024, all rights reserved</div><footer>Last modified today</footer></body></html>`
    const md = await htmlToMarkdown(html)
    expect(md).toContain('## Setup\n\nInstall the tool with the package manager of your system.')
    expect(md).not.toMatch(/Home|Docs|Buy|Skip|Acme|Prev|Search|Usage|Limits|Copyright|Last modified/)
  })

  it('HTML FAQ structure: a bold-only paragraph and a question-like definition term head the answer below them', async () => {
    const html = `<h1>FAQ</h1><p><b>(1) How do I reset it?</b></p><blockquote><p>Hold the button for ten seconds.</p></blockquote>
      <dl><dt>Why is the light red?</dt><dd><p>The battery is low.</p></dd><dt>Colour</dt><dd>Blue or grey</dd></dl>`
    const passages = await extract(html, 'text/html', 'faq.html')
    expect(passages.map((p) => [p.title, p.content])).toEqual([
      ['FAQ › (1) How do I reset it?', 'Hold the button for ten seconds.'],
      ['FAQ › Why is the light red?', 'The battery is low.\n\nColour: Blue or grey'],
    ])
  })

  it('HTML tables: rows labelled by the header row; preformatted text kept as a block', async () => {
    const md = await htmlToMarkdown('<h2>Plans</h2><table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>5 €</td></tr><tr><td>Pro</td><td>9 €</td></tr></table><pre># apt-get install foo\n$ foo --help</pre>')
    expect(md).toContain('Plan: Basic; Price: 5 €\nPlan: Pro; Price: 9 €')
    expect(md).toContain('```\n# apt-get install foo\n$ foo --help\n```')
    const passages = await extract('<h2>Run</h2><pre># apt-get install foo</pre>', 'text/html', 'run.html')
    expect(passages.map((p) => [p.title, p.meta.subtype])).toEqual([['run.html › Run', 'code']]) // a "#" in code is not a heading
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

  it('PDF layout: running headers, footers and page numbers dropped; headings from font size; hyphenation joined; a paragraph continued over a page break', () => {
    // Items as pdf.js gives them: y grows upwards; 10 pt body text, 14 pt section headings.
    const line = (str: string, y: number, size = 10, x = 57): PdfItem => ({ str, x, y, size, width: str.length * size * 0.5, eol: true })
    const page = (n: number, body: PdfItem[]) => ({ items: [line(`CHAPTER 1. SETUP — section ${n}`, 800, 9), ...body, line(String(n), 40, 9)] })
    const pages = [
      page(1, [line('1.1 Installing the tool', 740, 14), line('Download the archive and un-', 715), line('pack it in your home directory.', 703), line('Then run the installer; it asks', 680, 10, 72), line('for the target', 668)]),
      page(2, [line('directory and copies the files.', 760), line('1.2 Removing it', 730, 14), line('Delete the directory.', 705)]),
      page(3, [line('1.3 Upgrading', 740, 14), line('Install the new version over the old one.', 715)]),
    ]
    expect(layoutBlocks(pages)).toEqual([
      { headings: ['1.1 Installing the tool'], text: 'Download the archive and unpack it in your home directory.', pageNumber: 1 },
      { headings: ['1.1 Installing the tool'], text: 'Then run the installer; it asks for the target directory and copies the files.', pageNumber: 1 },
      { headings: ['1.2 Removing it'], text: 'Delete the directory.', pageNumber: 2 },
      { headings: ['1.3 Upgrading'], text: 'Install the new version over the old one.', pageNumber: 3 },
    ])
  })

  it('PDF layout: table-of-contents pages dropped; a short question followed by an indented answer is its heading', () => {
    const line = (str: string, y: number, x = 57, size = 10): PdfItem => ({ str, x, y, size, width: str.length * 5, eol: true })
    const toc = { items: Array.from({ length: 8 }, (_, i) => line(`${i + 1}. Topic number ${i + 1} . . . . . . . ${i + 3}`, 700 - i * 14)) }
    const faq = { items: [line('Questions', 740, 57, 18), line('What should I put in user.name?', 700), line('Your personal name, as a given name', 686, 87), line('and a family name.', 672, 87)] }
    expect(layoutBlocks([toc, faq])).toEqual([
      { headings: ['Questions', 'What should I put in user.name?'], text: 'Your personal name, as a given name and a family name.', pageNumber: 2 },
    ])
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
