import { describe, expect, it } from 'vitest'
import { byteRange } from '../../src/http/byte-range.js'

describe('byteRange (one byte range of a Range header, else the whole file)', () => {
  it('reads bytes=a-b, bytes=a- and bytes=-n, clamped to the file', () => {
    expect(byteRange('bytes=0-', 100)).toEqual({ start: 0, end: 99 })
    expect(byteRange('bytes=10-19', 100)).toEqual({ start: 10, end: 19 })
    expect(byteRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 })
    expect(byteRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 })
    expect(byteRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 })
    expect(byteRange(' bytes=5-5 ', 100)).toEqual({ start: 5, end: 5 })
  })

  it('ignores what it cannot serve as one range (the caller answers 200 with the whole file)', () => {
    for (const header of [
      undefined, '', 'bytes=', 'bytes=-', 'bytes=-0', 'bytes=100-', 'bytes=150-200', 'bytes=20-10', 'bytes=0-1,5-6', 'items=0-1',
      'bytes=a-b', 'bytes=1e3-', 'bytes=0x10-', `bytes=${'9'.repeat(40)}-`, 'bytes=0--1',
    ]) {
      expect(byteRange(header, 100), String(header)).toBeUndefined()
    }
    expect(byteRange('bytes=0-', 0)).toBeUndefined()
  })
})
