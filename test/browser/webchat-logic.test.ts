import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { inlineText, parseInline, parseMarkdown, type Block, type Inline } from '../../src/webchat/shared/markdown.js'
import { pickablesOf, safeUrl } from '../../src/webchat/shared/payload.js'
import { ResilientStream, SseParser, type StreamStatus } from '../../src/webchat/shared/sse.js'
import { Timeline } from '../../src/webchat/shared/timeline.js'
import type { Message } from '../../src/webchat/shared/types.js'

/** The webchat's logic that runs the same in the browser and in `parley chat` (no browser needed). */

const allNodes = (blocks: Block[]): Array<Block | Inline> => {
  const out: Array<Block | Inline> = []
  const visitInline = (n: Inline) => {
    out.push(n)
    if ('c' in n) n.c.forEach(visitInline)
  }
  const visit = (b: Block) => {
    out.push(b)
    if (b.t === 'quote') b.c.forEach(visit)
    else if (b.t === 'ul' || b.t === 'ol') b.items.forEach((i) => i.forEach(visitInline))
    else if ('c' in b) b.c.forEach(visitInline)
  }
  blocks.forEach(visit)
  return out
}

describe('markdown', () => {
  it('parses the common constructs into a tree', () => {
    expect(parseMarkdown('# Title\n\nSome **bold** and _em_ and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n```\nx < y\n```\n\n---')).toEqual([
      { t: 'h', level: 1, c: [{ t: 'text', v: 'Title' }] },
      { t: 'p', c: [{ t: 'text', v: 'Some ' }, { t: 'strong', c: [{ t: 'text', v: 'bold' }] }, { t: 'text', v: ' and ' }, { t: 'em', c: [{ t: 'text', v: 'em' }] }, { t: 'text', v: ' and ' }, { t: 'code', v: 'code' }, { t: 'text', v: '.' }] },
      { t: 'ul', items: [[{ t: 'text', v: 'one' }], [{ t: 'text', v: 'two' }]] },
      { t: 'ol', start: 1, items: [[{ t: 'text', v: 'first' }], [{ t: 'text', v: 'second' }]] },
      { t: 'quote', c: [{ t: 'p', c: [{ t: 'text', v: 'quoted' }] }] },
      { t: 'pre', v: 'x < y' },
      { t: 'hr' },
    ])
    expect(parseInline('line one\nline two')).toEqual([{ t: 'text', v: 'line one' }, { t: 'br' }, { t: 'text', v: 'line two' }])
    expect(parseInline('~~gone~~ snake_case_word \\*not em\\*')).toEqual([{ t: 'del', c: [{ t: 'text', v: 'gone' }] }, { t: 'text', v: ' snake_case_word *not em*' }])
  })

  it('keeps only safe link and image URLs', () => {
    expect(parseInline('[site](https://example.com/a?b=1) <https://x.org> see https://y.org/p.')).toEqual([
      { t: 'link', href: 'https://example.com/a?b=1', c: [{ t: 'text', v: 'site' }] },
      { t: 'text', v: ' ' },
      { t: 'link', href: 'https://x.org/', c: [{ t: 'text', v: 'https://x.org' }] },
      { t: 'text', v: ' see ' },
      { t: 'link', href: 'https://y.org/p', c: [{ t: 'text', v: 'https://y.org/p' }] },
      { t: 'text', v: '.' },
    ])
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'data:text/html,<script>', 'vbscript:x', '/relative', '//evil.example']) {
      const [link] = parseInline(`[x](${bad})`)
      if (link?.t === 'link') expect(link.href, bad).toBeUndefined()
      const [img] = parseInline(`![x](${bad})`)
      if (img?.t === 'img') expect(img.src, bad).toBeUndefined()
    }
    expect(parseInline('![alt **text**](https://example.com/i.png)')).toEqual([{ t: 'img', src: 'https://example.com/i.png', alt: 'alt text' }])
  })

  it('treats HTML as text', () => {
    const source = '<script>alert(1)</script> <img src=x onerror=alert(1)> **<b>bold</b>**'
    const text = allNodes(parseMarkdown(source)).filter((n): n is { t: 'text'; v: string } => n.t === 'text').map((n) => n.v).join('')
    expect(text).toBe('<script>alert(1)</script> <img src=x onerror=alert(1)> <b>bold</b>')
  })

  // No timing assertion: inputs ten times the size a quadratic parser could get through, so a parser that
  // backtracks or rescans would run for minutes and hit this test's timeout (a linear one takes well under a second).
  it('parses hostile input of 200,000 characters without backtracking (bounded by the test timeout)', { timeout: 30_000 }, () => {
    const n = 200_000
    const inputs = ['*'.repeat(n), '_a'.repeat(n / 2), '['.repeat(n), '`'.repeat(n), '**a'.repeat(n / 3), '> '.repeat(n / 2) + 'x', ('- a\n  b\n').repeat(n / 8), '![a](' + 'x'.repeat(n)]
    for (const input of inputs) {
      const blocks = parseMarkdown(input)
      expect(inlineText(blocks.flatMap((b) => ('c' in b && b.t !== 'quote' ? b.c : [])))).toBeTypeOf('string')
    }
  })
})

describe('payload helpers', () => {
  it('safeUrl accepts http(s) everywhere, mailto/tel only for links', () => {
    expect(safeUrl('https://example.com/a b')).toBe('https://example.com/a%20b')
    expect(safeUrl('mailto:a@b.c')).toBe('mailto:a@b.c')
    expect(safeUrl('mailto:a@b.c', 'media')).toBeUndefined()
    expect(safeUrl('javascript:alert(1)')).toBeUndefined()
    expect(safeUrl('data:image/png;base64,AAAA', 'media')).toBeUndefined()
    expect(safeUrl(42)).toBeUndefined()
  })

  it('numbers the options of choices, dropdowns, cards and carousels', () => {
    expect(pickablesOf({ type: 'carousel', items: [
      { title: 'a', actions: [{ action: 'postback', label: 'A', value: 'a' }, { action: 'url', label: 'Site', value: 'https://x.org' }] },
      { title: 'b', actions: [{ action: 'say', label: 'B', value: 'b' }] },
    ] })).toEqual([
      { label: 'A', kind: 'send', value: 'a' }, { label: 'Site', kind: 'open', value: 'https://x.org' }, { label: 'B', kind: 'send', value: 'b' },
    ])
    expect(pickablesOf({ type: 'text', text: 'x' })).toEqual([])
  })
})

describe('timeline', () => {
  const m = (id: string, createdAt: string): Message => ({ id, createdAt, conversationId: 'c', userId: 'u', payload: { type: 'text', text: id } })

  it('keeps each message once, ordered by createdAt then id, whatever the arrival order', () => {
    const t = new Timeline()
    expect(t.add(m('b', '2026-01-01T00:00:02.000Z'))).toBe(0)
    expect(t.add(m('a', '2026-01-01T00:00:01.000Z'))).toBe(0)
    expect(t.add(m('d', '2026-01-01T00:00:04.000Z'))).toBe(2)
    expect(t.add(m('c', '2026-01-01T00:00:02.000Z'))).toBe(2)
    expect(t.add(m('b', '2026-01-01T00:00:02.000Z'))).toBe(-1)
    expect(t.messages.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd'])
    expect(t.remove('b')).toBe(1)
    expect(t.remove('b')).toBe(-1)
    expect(t.add(m('b', '2026-01-01T00:00:02.000Z'))).toBe(1) // deleted, then seen again: shown again
  })
})

describe('SSE', () => {
  it('parses frames split anywhere, with CRLF, comments, ids and multi-line data', () => {
    const wire = ': hello\r\nid: 1\r\ndata: {"a":1}\r\n\r\nid: 2\ndata: line1\ndata: line2\n\n\rdata:x\r\r\n'
    for (const size of [1, 2, 3, 7, wire.length]) {
      const parser = new SseParser()
      const frames = []
      for (let i = 0; i < wire.length; i += size) frames.push(...parser.push(wire.slice(i, i + size)))
      expect(frames, `chunks of ${size}`).toEqual([{ id: '1', data: '{"a":1}' }, { id: '2', data: 'line1\nline2' }, { id: undefined, data: 'x' }])
    }
  })

  it('reconnects after drops and errors with Last-Event-ID, and stops on a refusal', async () => {
    const seen: Array<string | undefined> = []
    let request = 0
    const server = createServer((req, res: ServerResponse) => {
      request++
      seen.push(req.headers['last-event-id'] as string | undefined)
      if (request === 2) {
        res.writeHead(503).end()
        return
      }
      if (request === 4) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"type":"Unauthorized"}')
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`id: ${request * 10}\ndata: {"n":${request}}\n\n`)
      setTimeout(() => res.end(), 20) // the server drops the stream
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/listen`
    const frames: string[] = []
    const statuses: StreamStatus[] = []
    let refused = 0
    const stream = new ResilientStream({
      url: () => url,
      headers: () => ({ 'x-user-key': 'k' }),
      onFrame: (f) => frames.push(f.data),
      onStatus: (s) => statuses.push(s),
      onRefused: (status) => {
        refused = status
        return false
      },
      initialDelayMs: 10,
      maxDelayMs: 50,
    })
    stream.start()
    await expect.poll(() => refused, { timeout: 5000 }).toBe(401)
    await stream.stop()
    server.close()
    expect(frames).toEqual(['{"n":1}', '{"n":3}'])
    expect(seen).toEqual([undefined, '10', '10', '30'])
    expect(statuses).toContain('reconnecting')
    expect(stream.running).toBe(false)
  })

  it('treats silence as a dead connection', async () => {
    let requests = 0
    const server = createServer((_req, res) => {
      requests++
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(': open\n\n') // then nothing at all
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const stream = new ResilientStream({
      url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      headers: () => ({}),
      onFrame: () => undefined,
      idleTimeoutMs: 100,
      initialDelayMs: 10,
    })
    stream.start()
    await expect.poll(() => requests, { timeout: 5000 }).toBeGreaterThanOrEqual(2)
    await stream.stop()
    server.closeAllConnections()
    server.close()
  })
})
