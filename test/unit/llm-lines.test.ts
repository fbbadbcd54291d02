/**
 * The provider adapters read streamed answers line by line as the chunks arrive (src/llm/provider-http.ts): lines
 * split across chunks, CRLF, a last line without a newline, and the size cap. A long line is scanned once (the
 * reader keeps the text since the last newline in pieces), which this checks by its result, not its time.
 */
import { describe, expect, it } from 'vitest'
import { readLines, type ProviderResponse } from '../../src/llm/provider-http.js'

const response = (chunks: string[]): ProviderResponse => ({
  status: 200,
  body: (async function* () {
    for (const c of chunks) yield new TextEncoder().encode(c)
  })(),
})

async function lines(chunks: string[], maxBytes = 1 << 20): Promise<string[]> {
  const out: string[] = []
  for await (const line of readLines(response(chunks), maxBytes)) out.push(line)
  return out
}

describe('readLines', () => {
  it('splits on newlines across chunks, drops a trailing \\r, keeps empty lines and a last line without a newline', async () => {
    expect(await lines(['data: {"a"', ':1}\r\n\r', '\ndata: [DO', 'NE]\n', 'tail'])).toEqual(['data: {"a":1}', '', 'data: [DONE]', 'tail'])
    expect(await lines(['one\ntwo\n'])).toEqual(['one', 'two'])
    expect(await lines([])).toEqual([])
  })

  it('a line that arrives in many chunks is whole', async () => {
    const chunks = Array.from({ length: 200 }, (_, i) => String(i % 10).repeat(1000))
    const [line, next] = await lines([...chunks, '\nnext'])
    expect(line).toBe(chunks.join(''))
    expect(next).toBe('next')
  })

  it('more than the cap is refused as a malformed answer', async () => {
    await expect(lines(['x'.repeat(600), 'y'.repeat(600)], 1000)).rejects.toThrow(/more than 1000 bytes/)
  })
})
