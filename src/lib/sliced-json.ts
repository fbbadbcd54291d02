import { findJsonProblem } from './json-guard.js'
import { nextTurn, WRITE_SLICE_BYTES } from './slices.js'

/**
 * JSON.parse of a large request body without holding the event loop (#24 item 8: one 40 MiB Tables write stalled
 * every tenant). A body that is an object whose values hold large arrays (`{ rows: [...] }`, the shape of every
 * large body the APIs take) is parsed in slices: one scan finds the top-level arrays' elements, yielding every
 * `sliceChars` characters; the object with those arrays emptied is parsed, then the elements one by one with the
 * native parser, yielding between slices; each element is checked (findJsonProblem) as it is parsed. Anything else
 * is one JSON.parse. The result, and whether the text is refused, are those of JSON.parse (the property test in
 * test/unit/sliced-json.test.ts compares them on generated and mutated bodies).
 */
export class SlicedJsonError extends Error {}

interface ArrayValue {
  key: string
  /** Offsets of the array's `[` and `]`. */
  open: number
  close: number
  /** [start, end) of each element's text. */
  elements: Array<[number, number]>
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d])

export async function parseJsonInSlices(text: string, sliceChars = WRITE_SLICE_BYTES): Promise<{ value: unknown; problem: string | undefined }> {
  const arrays = await scanTopLevelArrays(text, sliceChars)
  if (arrays === undefined || arrays.length === 0) {
    const value = JSON.parse(text) as unknown
    return { value, problem: findJsonProblem(value) }
  }
  // The object without its arrays' contents: small, parsed at once (and it refuses what is malformed around them).
  let skeleton = ''
  let from = 0
  for (const a of arrays) {
    skeleton += text.slice(from, a.open + 1)
    from = a.close
  }
  skeleton += text.slice(from)
  const value = JSON.parse(skeleton) as Record<string, unknown>
  // Every element is parsed even after the guard found a problem: malformed text is refused as such, as JSON.parse
  // would refuse it, whatever else is wrong with it.
  let problem = findJsonProblem(value)
  let since = 0
  const parsed: unknown[][] = []
  for (const a of arrays) {
    const items: unknown[] = []
    for (let i = 0; i < a.elements.length; i++) {
      const [start, end] = a.elements[i]!
      const item = JSON.parse(text.slice(start, end)) as unknown
      problem ??= findJsonProblem(item, { depth: 3, path: `body.${a.key}[${i}]` })
      items.push(item)
      since += end - start
      if (since >= sliceChars) {
        since = 0
        await nextTurn()
      }
    }
    parsed.push(items)
  }
  if (problem) return { value, problem }
  // In text order: where a key repeats, JSON.parse keeps the last value, and so does this. The keys were checked
  // with the skeleton (no __proto__ or constructor): plain own properties.
  arrays.forEach((a, i) => Object.defineProperty(value, a.key, { value: parsed[i], enumerable: true, writable: true, configurable: true }))
  return { value, problem: undefined }
}

/**
 * The arrays that are values of the top-level object, with their elements' offsets; undefined when the text is not
 * an object (then JSON.parse decides). Malformed text is left to JSON.parse as well: the scan only needs to be right
 * for well-formed JSON, since every piece it cuts is parsed natively afterwards.
 */
async function scanTopLevelArrays(text: string, sliceChars: number): Promise<ArrayValue[] | undefined> {
  let i = 0
  while (i < text.length && WS.has(text.charCodeAt(i))) i++
  if (text.charCodeAt(i) !== 0x7b /* { */) return undefined
  const arrays: ArrayValue[] = []
  let depth = 0
  let inString = false
  let stringStart = -1
  let lastString: [number, number] | undefined // the last string closed at depth 1 (a key, when ':' follows)
  let key: string | undefined
  let current: ArrayValue | undefined
  let elementStart = -1
  let nextYield = sliceChars
  for (; i < text.length; i++) {
    if (i >= nextYield) {
      nextYield = i + sliceChars
      await nextTurn()
    }
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) i++
      else if (c === 0x22 /* " */) {
        inString = false
        if (depth === 1) lastString = [stringStart, i + 1]
      }
      continue
    }
    if (c === 0x22) {
      inString = true
      stringStart = i
      if (current && depth === 2 && elementStart < 0) elementStart = i
      continue
    }
    if (c === 0x3a /* : */ && depth === 1 && lastString) {
      key = JSON.parse(text.slice(lastString[0], lastString[1])) as string
      lastString = undefined
      continue
    }
    if (c === 0x7b || c === 0x5b /* { [ */) {
      if (depth === 1 && c === 0x5b && key !== undefined) {
        current = { key, open: i, close: -1, elements: [] }
        elementStart = -1
      } else if (current && depth === 2 && elementStart < 0) elementStart = i
      depth++
      continue
    }
    if (c === 0x7d || c === 0x5d /* } ] */) {
      depth--
      if (current && depth === 1) {
        if (elementStart >= 0) current.elements.push([elementStart, i])
        else if (current.elements.length > 0) current.elements.push([i, i]) // `[1,]`: an empty element, refused
        current.close = i
        arrays.push(current)
        current = undefined
        key = undefined
      }
      continue
    }
    if (current && depth === 2) {
      if (c === 0x2c /* , */) {
        current.elements.push(elementStart >= 0 ? [elementStart, i] : [i, i])
        elementStart = -1
      } else if (elementStart < 0 && !WS.has(c)) elementStart = i
    }
    if (c === 0x2c && depth === 1) key = undefined
  }
  return arrays
}
