/**
 * The built-in word vectors (src/domain/knowledge/embeddings/word-vectors.ts): the build artefact made by
 * scripts/build-word-vectors.mjs (postinstall / npm run build) is present and well-formed, and the provider's
 * sentence vectors are deterministic, unit-length, and closer for texts that mean the same thing in other words.
 */
import { statSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BUILTIN_MODEL, loadWordVectors, WORD_VECTOR_WORDS, WORD_VECTORS_FILE, WordVectorEmbeddings, wordVectorsPresent } from '../../src/domain/knowledge/embeddings/word-vectors.js'

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((n, x, i) => n + x * b[i]!, 0)

describe('built-in word vectors', () => {
  it('the build artefact is present: 50,000 words × 100 dims, a few MB, not the 290 MB JSON', () => {
    expect(wordVectorsPresent(), `${WORD_VECTORS_FILE} (npm run build or npm install makes it)`).toBe(true)
    const size = statSync(WORD_VECTORS_FILE).size
    expect(size).toBeGreaterThan(4e6)
    expect(size).toBeLessThan(10e6)
    const wv = loadWordVectors()!
    expect(wv.dims).toBe(100)
    expect(wv.index.size).toBe(WORD_VECTOR_WORDS)
    // Frequency order: "the" first; ordinary and technical words are in.
    expect(wv.index.get('the')).toBe(0)
    for (const w of ['pronounce', 'compiler', 'library', 'version', 'installed']) expect(wv.index.has(w), w).toBe(true)
  })

  it('embeds deterministically: unit vectors, the same for the same text; null when no word is known', async () => {
    const provider = new WordVectorEmbeddings()
    expect(provider.model).toBe(BUILTIN_MODEL)
    const texts = ['How do you say the name out loud?', 'How is Debian pronounced?', 'qzxqzx vvbnm', 'the of and']
    const [a, b, unknown, stop] = await provider.embed(texts)
    const again = await provider.embed(texts)
    expect(Array.from(again[0]!)).toEqual(Array.from(a!))
    expect(Array.from(again[1]!)).toEqual(Array.from(b!))
    expect(a!.length).toBe(100)
    expect(Math.abs(cosine(a!, a!) - 1)).toBeLessThan(1e-5)
    expect(unknown).toBeNull()
    expect(stop).toBeNull()
  })

  it('texts meaning the same thing in other words are closer than unrelated ones', async () => {
    const [q, answer, unrelated] = await new WordVectorEmbeddings().embed([
      'the linker cannot find the png library although it is installed',
      'Linking fails: undefined reference to libpng; the shared object is missing from the loader path',
      'Bake the sourdough bread for forty minutes in a hot oven',
    ])
    expect(cosine(q!, answer!)).toBeGreaterThan(cosine(q!, unrelated!))
  })
})
