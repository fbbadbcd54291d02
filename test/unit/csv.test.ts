import { describe, expect, it } from 'vitest'
import { parseDelimited } from '../../src/lib/csv.js'

describe('parseDelimited (shared by table imports and knowledge extraction)', () => {
  it('reads quoted fields with doubled quotes, separators and line ends inside quotes, CRLF and LF', () => {
    expect(parseDelimited('a,b\r\n"x, ""y""","line\nbreak"\nlast,')).toEqual([['a', 'b'], ['x, "y"', 'line\nbreak'], ['last', '']])
  })
  it('a quote inside a field is a character, not the start of a quoted field', () => {
    expect(parseDelimited('name,size\n5" pipe,2')).toEqual([['name', 'size'], ['5" pipe', '2']])
  })
  it('leaves out blank rows; tabs as the separator', () => {
    expect(parseDelimited('a\tb\n\n \t \n1\t2\n', '\t')).toEqual([['a', 'b'], ['1', '2']])
  })
})
