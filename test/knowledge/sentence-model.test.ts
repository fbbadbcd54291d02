/**
 * The built-in sentence model (src/domain/knowledge/embeddings/sentence-model.ts): the real Universal Sentence Encoder
 * lite from the npm registry, in its real worker thread. Unit vectors of 512 components; a paraphrase closer than
 * an unrelated text; empty texts have no vector; a query goes ahead of a long batch; the worker stops when idle and
 * starts again; a crashed worker fails what it was doing and the next call works; a model that cannot load fails
 * every waiting call with the reason.
 */
import { Worker } from 'node:worker_threads'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddingsError } from '../../src/domain/knowledge/embeddings/provider.js'
import { createSentenceWorker, SentenceModelEmbeddings } from '../../src/domain/knowledge/embeddings/sentence-model.js'

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)
const opts = { timeoutMs: 60_000 }

describe('built-in sentence model', () => {
  const model = new SentenceModelEmbeddings()
  afterAll(() => model.close())

  it('embeds texts as 512-d unit vectors (null for an empty text); a paraphrase is closer than an unrelated text', async () => {
    const [q, para, other, empty] = await model.embed([
      'how do you actually say the name out loud',
      'How is the name pronounced? Say it as three syllables.',
      'Orders ship from Rotterdam by courier.',
      '   ',
    ], opts)
    expect(empty).toBeNull()
    for (const v of [q!, para!, other!]) {
      expect(v).toHaveLength(512)
      expect(dot(v, v)).toBeCloseTo(1, 4)
    }
    expect(dot(q!, para!)).toBeGreaterThan(dot(q!, other!) + 0.15)
    // A passage is embedded by its text, not its heading path.
    expect(model.textOf({ title: 'Doc › Part', content: 'the text' })).toBe('the text')
  })

  it('a query sent while a batch of passages is being embedded is answered before the batch', async () => {
    const passages = Array.from({ length: 40 }, (_, i) => `Passage ${i}: the archive keeps every release of the distribution on its mirrors, signed with the release key. `.repeat(4))
    const order: string[] = []
    const batch = model.embed(passages, opts).then(() => order.push('batch'))
    await new Promise((r) => setTimeout(r, 50))
    const query = model.embed(['where are old releases kept'], { ...opts, priority: true }).then(() => order.push('query'))
    await Promise.all([batch, query])
    expect(order).toEqual(['query', 'batch'])
  })

  it('stops its worker when idle and starts it again for the next text', async () => {
    const idle = new SentenceModelEmbeddings({ idleMs: 100 })
    try {
      await idle.embed(['first'], opts)
      expect(idle.alive).toBe(true)
      await expect.poll(() => idle.alive, { timeout: 5_000 }).toBe(false)
      const [v] = await idle.embed(['second'], opts)
      expect(v).toHaveLength(512)
      expect(idle.started).toBe(2)
    } finally {
      await idle.close()
    }
  })

  it('a worker that dies fails the call it was on with "unavailable"; the next call starts a new worker', async () => {
    let made = 0
    const crashing = new SentenceModelEmbeddings({
      createWorker: () => (++made === 1 ? new Worker('setTimeout(() => process.exit(3), 50)', { eval: true }) : createSentenceWorker()),
    })
    try {
      const first = await crashing.embed(['lost'], opts).catch((e: unknown) => e)
      expect(first).toBeInstanceOf(EmbeddingsError)
      expect(first).toMatchObject({ kind: 'unavailable' })
      const [v] = await crashing.embed(['works again'], opts)
      expect(v).toHaveLength(512)
      expect(made).toBe(2)
    } finally {
      await crashing.close()
    }
  })

  it('a model that cannot load fails every waiting call with the reason; a worker that does not answer in time is replaced', async () => {
    const broken = new SentenceModelEmbeddings({
      createWorker: () => new Worker(`require('node:worker_threads').parentPort.postMessage({ failed: 'weights missing' })`, { eval: true }),
    })
    try {
      const calls = await Promise.all([broken.embed(['a'], opts).catch((e: Error) => e), broken.embed(['b'], opts).catch((e: Error) => e)])
      for (const e of calls) expect((e as Error).message).toMatch(/could not be loaded: weights missing/)
    } finally {
      await broken.close()
    }
    // A worker that never loads: the call times out; the worker is dropped at its load deadline, and the next call gets
    // a fresh one. The fresh one is a stand-in that speaks the worker's protocol and is ready at once: the real model
    // takes more than this 1 s load deadline on a loaded machine (a full run saw it replaced 9 times).
    let made = 0
    const silent = new SentenceModelEmbeddings({
      loadTimeoutMs: 1000,
      createWorker: () => (++made === 1 ? new Worker('setInterval(() => {}, 1000)', { eval: true }) : new Worker(`const { parentPort } = require('node:worker_threads')
        parentPort.postMessage({ ready: true })
        parentPort.on('message', (m) => parentPort.postMessage({ id: m.id, vectors: m.texts.map(() => new Float32Array(512)) }))`, { eval: true })),
    })
    try {
      await expect(silent.embed(['never'], { timeoutMs: 200 })).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/did not answer within 200 ms/) })
      const [v] = await silent.embed(['answered by the next worker'], opts)
      expect(v).toHaveLength(512)
      expect(made).toBe(2)
    } finally {
      await silent.close()
    }
  })

  it('a question that times out while the model loads fails alone: the worker keeps loading and answers the next one', async () => {
    // A stand-in worker that speaks the worker's protocol and takes 1.5 s to load (a busy machine): only its timing is fake.
    let made = 0
    const slow = new SentenceModelEmbeddings({
      createWorker: () => {
        made++
        return new Worker(`const { parentPort } = require('node:worker_threads')
          setTimeout(() => parentPort.postMessage({ ready: true }), 1500)
          parentPort.on('message', (m) => parentPort.postMessage({ id: m.id, vectors: m.texts.map(() => new Float32Array(512).fill(m.texts.length)) }))`, { eval: true })
      },
    })
    try {
      await expect(slow.embed(['asked too early'], { timeoutMs: 200 })).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/did not answer within 200 ms/) })
      const [v] = await slow.embed(['asked again'], { timeoutMs: 30_000 })
      expect(v).toHaveLength(512)
      expect(made).toBe(1) // not replaced: before, the first question's timeout took the loading worker down
      expect(slow.embedded).toBe(1) // the question that timed out was never sent to it
    } finally {
      await slow.close()
    }
  })
})
