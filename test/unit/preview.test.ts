import { describe, expect, it } from 'vitest'
import { previewOf } from '../../src/runtime/preview.js'

const action = (label: string) => ({ action: 'postback', label, value: label.toLowerCase() })
const option = (label: string) => ({ label, value: label.toLowerCase() })

describe('previewOf: message payloads', () => {
  it('text → its text, exactly', () => {
    expect(previewOf({ type: 'text', text: 'Hello *world*  ' })).toBe('Hello *world*  ')
  })

  it('image, audio, video → "[kind] url"', () => {
    expect(previewOf({ type: 'image', imageUrl: 'https://x.test/a.png' })).toBe('[image] https://x.test/a.png')
    expect(previewOf({ type: 'audio', audioUrl: 'https://x.test/a.mp3' })).toBe('[audio] https://x.test/a.mp3')
    expect(previewOf({ type: 'video', videoUrl: 'https://x.test/a.mp4' })).toBe('[video] https://x.test/a.mp4')
  })

  it('file → its title when present, else its url', () => {
    expect(previewOf({ type: 'file', fileUrl: 'https://x.test/r.pdf', title: 'Report Q3' })).toBe('[file] Report Q3')
    expect(previewOf({ type: 'file', fileUrl: 'https://x.test/r.pdf' })).toBe('[file] https://x.test/r.pdf')
  })

  it('location → address, else title, else "lat, lng"', () => {
    expect(previewOf({ type: 'location', latitude: 45.5, longitude: -73.6, address: '1 Main St', title: 'Office' })).toBe('1 Main St')
    expect(previewOf({ type: 'location', latitude: 45.5, longitude: -73.6, title: 'Office' })).toBe('Office')
    expect(previewOf({ type: 'location', latitude: 45.5, longitude: -73.6, address: '' })).toBe('45.5, -73.6')
  })

  it('card → title - subtitle (action labels)', () => {
    expect(previewOf({ type: 'card', title: 'Shoe', subtitle: 'Size 42', actions: [action('Buy'), action('Details')] })).toBe('Shoe - Size 42 (Buy, Details)')
    expect(previewOf({ type: 'card', title: 'Shoe', actions: [] })).toBe('Shoe')
  })

  it("carousel → its cards' titles", () => {
    const items = [
      { title: 'One', actions: [action('A')] },
      { type: 'card', title: 'Two', subtitle: 's', actions: [] },
    ]
    expect(previewOf({ type: 'carousel', items })).toBe('One, Two')
    expect(previewOf({ type: 'carousel', items: [] })).toBe('[carousel]')
  })

  it('choice and dropdown → text (option labels)', () => {
    expect(previewOf({ type: 'choice', text: 'Pick one', options: [option('Red'), option('Blue')] })).toBe('Pick one (Red, Blue)')
    expect(previewOf({ type: 'dropdown', text: 'Country?', options: [option('France')] })).toBe('Country? (France)')
    expect(previewOf({ type: 'choice', text: 'Nothing', options: [] })).toBe('Nothing')
  })

  it("bloc → its items' previews, one per line", () => {
    const bloc = {
      type: 'bloc',
      items: [
        { type: 'text', text: 'Here you go' },
        { type: 'markdown', markdown: '**bold**' },
        { type: 'image', imageUrl: 'https://x.test/i.png' },
        { type: 'location', latitude: 1, longitude: 2 },
      ],
    }
    expect(previewOf(bloc)).toBe('Here you go\nbold\n[image] https://x.test/i.png\n1, 2')
    expect(previewOf({ type: 'bloc', items: [] })).toBe('[bloc]')
  })
})

describe('previewOf: markdown', () => {
  const md = (markdown: string) => previewOf({ type: 'markdown', markdown })

  it('strips emphasis, code, links, images and headings', () => {
    expect(md('# Title')).toBe('Title')
    expect(md('## Sub ##')).toBe('Sub')
    expect(md('Some **bold**, __strong__, *it*, _em_ and ~~gone~~ text')).toBe('Some bold, strong, it, em and gone text')
    expect(md('Use `npm *install*` now')).toBe('Use npm *install* now')
    expect(md('See [the docs](https://x.test/docs "Docs") and ![a cat](https://x.test/cat.png)')).toBe('See the docs and a cat')
    expect(md('Ref [link][1]\n\n[1]: https://x.test')).toBe('Ref link')
    expect(md('Visit <https://x.test/a>')).toBe('Visit https://x.test/a')
    expect(md('snake_case_name stays')).toBe('snake_case_name stays')
    expect(md('escaped \\*stars\\* stay')).toBe('escaped *stars* stay')
    expect(md('<b>html</b> &amp; entities &lt;3 &#65;')).toBe('html & entities <3 A')
  })

  it('strips block markup: lists, quotes, rules, fences, tables', () => {
    const text = ['> quoted *text*', '', '- one', '* two', '+ [x] three', '1. first', '', '---', '```js', 'const a = **b**', '```', '| a | b |', '|---|:-:|', '| 1 | 2 |'].join('\n')
    expect(md(text)).toBe(['quoted text', '', 'one', 'two', 'three', '1. first', '', 'const a = **b**', '| a | b |', '| 1 | 2 |'].join('\n'))
  })

  it('collapses blank lines and trims', () => {
    expect(md('\n\n  a\n\n\n\nb  \n\n')).toBe('a\n\nb')
  })

  // No timing assertion: each input is ten times what a quadratic scan could get through before the test's
  // timeout, so a backtracking or rescanning preview fails by timing out (a linear one takes milliseconds).
  it('stays linear on hostile input (bounded by the test timeout)', { timeout: 30_000 }, () => {
    const hostile = [
      '['.repeat(500_000),
      '*'.repeat(500_000) + 'x',
      '**a'.repeat(200_000),
      '# ' + ' '.repeat(500_000) + 'x',
      '<a' + ' '.repeat(500_000),
      '_a'.repeat(300_000),
      '![' + '('.repeat(500_000),
      '`'.repeat(500_000),
      '&'.repeat(500_000),
    ]
    for (const text of hostile) {
      expect(previewOf({ type: 'markdown', markdown: text })).toBeTypeOf('string')
    }
  })
})

describe('previewOf: anything else', () => {
  it('custom event payloads → compact JSON', () => {
    expect(previewOf({ name: 'order', data: { id: 7, ok: true } })).toBe('{"name":"order","data":{"id":7,"ok":true}}')
    expect(previewOf({ type: 'postback', value: 'x' })).toBe('{"type":"postback","value":"x"}')
  })

  it('known types missing their fields fall back to JSON', () => {
    expect(previewOf({ type: 'text' })).toBe('{"type":"text"}')
    expect(previewOf({ type: 'image', imageUrl: '' })).toBe('{"type":"image","imageUrl":""}')
  })

  it('truncates long JSON to 500 characters', () => {
    const out = previewOf({ blob: 'x'.repeat(2000) })
    expect(out).toHaveLength(500)
    expect(out.endsWith('…')).toBe(true)
  })

  it('handles non-objects, cycles and BigInt without throwing', () => {
    expect(previewOf(undefined)).toBe('')
    expect(previewOf(null)).toBe('null')
    expect(previewOf(42)).toBe('42')
    expect(previewOf('hi')).toBe('"hi"')
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = cyclic
    expect(previewOf(cyclic)).toBe('[object Object]')
    expect(previewOf({ n: 1n })).toBe('[object Object]')
  })

  it('is self-contained (can be re-created from its source)', () => {
    const recreated = new Function('return (' + String(previewOf) + ')')() as typeof previewOf
    expect(recreated({ type: 'choice', text: 'Pick', options: [option('A')] })).toBe('Pick (A)')
    expect(recreated({ type: 'markdown', markdown: '# **Hi** [there](https://x.test)' })).toBe('Hi there')
  })
})
