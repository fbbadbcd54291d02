import { createHmac } from 'node:crypto'
import { BlobTooLargeError, type BlobStore } from '../blobs/blob-store.js'
import type { Config } from '../config.js'
import { safeEqual } from '../lib/crypto.js'
import { ApiError, errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { parseSignature, SIGNATURE_HEADER } from '../lib/signature.js'
import { findJsonProblem } from '../lib/json-guard.js'
import type { DeletedBot, IntegrationRow, JsonObject, Store } from '../store/store.js'
import type { WebhookDeliveryRow, WebhookRequestRecord } from '../store/webhook-store.js'

/** Where webhook integrations live: a static first segment, like /webchat, so it wins over the Chat API's `/{webhookId}/…`. */
export const WEBHOOK_PREFIX = '/webhooks'
export const webhookUrl = (publicUrl: string, webhookId: string) => `${publicUrl.replace(/\/+$/, '')}${WEBHOOK_PREFIX}/${encodeURIComponent(webhookId)}`

/** Headers of the webhook integration (README "Webhook integration"). */
export { SIGNATURE_HEADER, signatureHeader } from '../lib/signature.js'
export const IDEMPOTENCY_HEADERS = ['idempotency-key', 'x-idempotency-key'] as const

/** A claimed delivery is retried at most this many times (a body that crashes the process every time ends here). */
const MAX_ATTEMPTS = 5
/** Largest chunk client.readWebhookBody returns: well under the sandbox's memory limit. */
const READ_CHUNK_BYTES = 1024 * 1024
const MAX_IDEMPOTENCY_KEY = 200

export interface WebhookRequest {
  webhookId: string
  /** Method, sub-path, query and headers (what Botpress's webhook event carries besides the body). */
  request: WebhookRequestRecord
  contentType: string | undefined
  contentLength: number | undefined
  signature: string | undefined
  idempotencyKey: string | undefined
  body: AsyncIterable<Uint8Array>
}

const isJson = (contentType: string | undefined) => {
  const type = contentType?.split(';')[0]?.trim().toLowerCase()
  return type === 'application/json' || (type?.startsWith('application/') === true && type.endsWith('+json'))
}

const secretOf = (integration: IntegrationRow) => {
  const secret = integration.configuration.secret
  return typeof secret === 'string' && secret !== '' ? secret : undefined
}

/** A stored webhook delivery, as the bot's webhook turn sees it. */
export interface WebhookEventSource {
  id: string
  createdAt: number
  payload: JsonObject
}

/** Host calls a webhook turn adds to the bot's client (client.readWebhookBody). */
export type HostExtension = Record<string, (args: Record<string, unknown>) => Promise<unknown>>

/** What runs a delivery as the owning bot's webhook turn: the runtime (BotRuntime), wired in src/compose.ts. */
export interface WebhookTurns {
  webhookTurn(integration: IntegrationRow, source: WebhookEventSource, extension?: HostExtension): Promise<void>
}

/**
 * The built-in `webhook` integration: receives deliveries (body streamed to the blob store under
 * the 100 MB limit, signature checked on the fly, queued durably) and processes the queue
 * asynchronously with leases, so several instances can share it and a restart loses nothing.
 */
export class WebhookService {
  readonly blobs: BlobStore
  private readonly clock: () => number
  private readonly instanceId = uuidv7()
  private readonly workers: Promise<void>[] = []
  private wake: (() => void)[] = []
  private stopped = false

  constructor(private readonly deps: {
    config: Config
    store: Store
    runtime: WebhookTurns
    /** The instance's configured blob store (src/compose.ts): shared by every instance on PostgreSQL. */
    blobs: BlobStore
    warn: (context: object, message: string) => void
    clock?: () => number
  }) {
    this.blobs = deps.blobs
    this.clock = deps.clock ?? Date.now
  }

  private get config() {
    return this.deps.config.webhook
  }

  /**
   * The enabled built-in webhook integration with this id; 404 otherwise (also for a chat integration's id, and
   * once an SDK integration installed as `webhook` replaced it: its webhookUrl is then /integration-webhooks/…).
   */
  async resolve(webhookId: string): Promise<IntegrationRow> {
    const integration = webhookId.length > 200 ? undefined : await this.deps.store.getIntegrationByWebhookId(webhookId)
    if (!integration || !(await this.isBuiltIn(integration))) throw errors.notFound('Webhook', webhookId)
    return integration
  }

  /** Enabled, named `webhook`, and no installation (an installed SDK integration takes the built-in's place). */
  private async isBuiltIn(integration: IntegrationRow): Promise<boolean> {
    return integration.enabled && integration.name === 'webhook' && (await this.deps.store.integrations.installationsOf([integration.id])).length === 0
  }

  /**
   * Stores and queues one delivery; resolves once it is durable (the route then answers 200).
   * The body is held in memory only up to the inline threshold (to check that it is JSON).
   */
  async receive(req: WebhookRequest): Promise<{ id: string; duplicate: boolean }> {
    const integration = await this.resolve(req.webhookId)
    // Any method; a body must be JSON (a media type that is not JSON is refused before reading, a body without one after).
    if (req.contentType !== undefined && !isJson(req.contentType) && req.contentLength !== 0) throw errors.unsupportedMediaType(req.contentType)
    const { maxBodyBytes, inlineBodyBytes, toleranceSeconds } = this.config
    if (req.contentLength !== undefined && req.contentLength > maxBodyBytes) throw errors.payloadTooLarge(maxBodyBytes)
    const key = req.idempotencyKey
    if (key !== undefined && (key === '' || key.length > MAX_IDEMPOTENCY_KEY)) {
      throw errors.invalidPayload(`The idempotency key must be 1 to ${MAX_IDEMPOTENCY_KEY} characters`)
    }
    const secret = secretOf(integration)
    let signature: { t: number; v1: string[] } | undefined
    if (secret) {
      // Checked before reading the body: an unsigned or stale request costs no disk.
      signature = parseSignature(req.signature)
      if (!signature) throw errors.unauthorized(`Missing or malformed ${SIGNATURE_HEADER} header (expected t=<unix seconds>,v1=<hex HMAC-SHA256>)`)
      if (Math.abs(this.clock() / 1000 - signature.t) > toleranceSeconds) throw errors.unauthorized(`The ${SIGNATURE_HEADER} timestamp is outside the ${toleranceSeconds} s window`)
    }
    const hmac = secret && signature ? createHmac('sha256', secret).update(`${signature.t}.`) : undefined
    let inline: Buffer[] | undefined = []
    let seen = 0
    const tapped = (async function* (source: AsyncIterable<Uint8Array>) {
      for await (const chunk of source) {
        hmac?.update(chunk)
        seen += chunk.length
        if (inline && seen <= inlineBodyBytes) inline.push(Buffer.from(chunk))
        else inline = undefined
        yield chunk
      }
    })(req.body)
    let blob: { name: string; size: number }
    try {
      blob = await this.blobs.put(tapped, { maxBytes: maxBodyBytes })
    } catch (err) {
      if (err instanceof BlobTooLargeError) throw errors.payloadTooLarge(maxBodyBytes)
      throw err
    }
    try {
      if (hmac && signature) {
        const digest = hmac.digest('hex')
        if (!signature.v1.some((v) => safeEqual(v, digest))) throw errors.unauthorized(`The ${SIGNATURE_HEADER} signature does not match the body`)
      }
      if (blob.size > 0 && !isJson(req.contentType)) throw errors.unsupportedMediaType(req.contentType ?? '(none)')
      if (inline && blob.size > 0) parseBody(Buffer.concat(inline))
      const queued = await this.deps.store.webhooks.enqueue({
        id: uuidv7(), integrationId: integration.id, idempotencyKey: key ?? null, blobName: blob.name, size: blob.size,
        contentType: (req.contentType ?? '').slice(0, 200), createdAt: this.clock(), request: req.request,
      })
      // The bot (or its workspace) was deleted while the body streamed in: as if it had been gone before.
      if (!queued) throw errors.notFound('Webhook', req.webhookId)
      const { delivery, created } = queued
      if (!created) await this.dropBlob(blob.name)
      else this.kick()
      return { id: delivery.id, duplicate: !created }
    } catch (err) {
      await this.dropBlob(blob.name)
      throw err
    }
  }

  private async dropBlob(name: string): Promise<void> {
    await this.blobs.delete(name).catch((err: unknown) => this.deps.warn({ err, blob: name }, 'could not delete a webhook body'))
  }

  // ---- processing ----

  /** Starts this instance's workers (none when `webhook.workers` is 0: receive only). */
  start(): void {
    this.stopped = false
    for (let i = 0; i < this.config.workers; i++) this.workers.push(this.work())
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.kick()
    await Promise.allSettled(this.workers.splice(0))
  }

  /** Wakes idle workers (a delivery was queued here). */
  kick(): void {
    for (const wake of this.wake.splice(0)) wake()
  }

  private leaseMs(): number {
    return this.deps.config.sandboxLimits.timeoutMs + 30_000
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      let delivery: WebhookDeliveryRow | undefined
      try {
        delivery = await this.deps.store.webhooks.claim(this.instanceId, this.clock(), this.leaseMs())
        if (delivery) await this.process(delivery)
      } catch (err) {
        this.deps.warn({ err, delivery: delivery?.id }, 'webhook delivery processing failed; it is retried when its lease expires')
      }
      if (!delivery && !this.stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.config.pollMs)
          this.wake.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
    }
  }

  private async process(delivery: WebhookDeliveryRow): Promise<void> {
    const { store } = this.deps
    const integration = await store.getIntegration(delivery.integrationId)
    // A disabled (or replaced) integration's queued deliveries are dropped; so are ones that failed too often.
    if (!integration || !(await this.isBuiltIn(integration)) || delivery.attempts > MAX_ATTEMPTS) {
      await this.finish(delivery, 'failed')
      return
    }
    const inline = delivery.blobName !== null && delivery.size <= this.config.inlineBodyBytes
    // Botpress's webhook event ({ body, query, method, headers, path }; no body: {}) and Parley's delivery fields.
    const request = delivery.request ?? { method: 'POST', path: '', query: '', headers: {} }
    const payload: JsonObject = {
      deliveryId: delivery.id,
      contentType: delivery.contentType,
      size: delivery.size,
      bodyIncluded: inline,
      body: !inline ? null : delivery.size === 0 ? {} : (await this.readAll(delivery.blobName!)) as JsonObject,
      method: request.method,
      path: request.path,
      query: flatQuery(request.query),
      headers: request.headers,
    }
    // The lease is renewed while the bot runs, so a long turn is not taken over by another instance.
    const heartbeat = setInterval(() => {
      void store.webhooks.extendLease(delivery.id, this.instanceId, this.clock() + this.leaseMs()).catch(() => {})
    }, Math.max(1000, this.leaseMs() / 3))
    const reader = new BodyReader(this.blobs, delivery)
    try {
      await this.deps.runtime.webhookTurn(integration, { id: delivery.id, createdAt: delivery.createdAt, payload }, {
        readWebhookBody: (args) => reader.read(args),
      })
    } finally {
      clearInterval(heartbeat)
      reader.close()
    }
    await this.finish(delivery, 'done')
  }

  private async finish(delivery: WebhookDeliveryRow, status: 'done' | 'failed'): Promise<void> {
    if (await this.deps.store.webhooks.finish(delivery.id, this.instanceId, status, this.clock())) {
      if (delivery.blobName) await this.dropBlob(delivery.blobName)
    }
  }

  private async readAll(name: string): Promise<unknown> {
    const blob = await this.blobs.get(name)
    if (!blob) return null
    const chunks: Buffer[] = []
    for await (const chunk of blob.stream) chunks.push(chunk as Buffer)
    return parseBody(Buffer.concat(chunks))
  }

  /**
   * BotService cleaner: the bodies of the bot's queued deliveries, removed once its rows are gone. The
   * store lists them in the deleting transaction, so a delivery queued during the delete is not missed.
   */
  async prepareBotCleanup(): Promise<(deleted: DeletedBot) => Promise<void>> {
    return async (deleted) => {
      for (const name of deleted.webhookBlobNames) await this.dropBlob(name)
    }
  }
}

/** `a=1&b=2&b=3` → { a: '1', b: ['2', '3'] } (keys kept as written; none that could reach a prototype). */
function flatQuery(query: string): JsonObject {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of new URLSearchParams(query)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') continue
    const seen = out[k]
    out[k] = seen === undefined ? v : Array.isArray(seen) ? [...seen, v] : [seen, v]
  }
  return out
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The same checks as the JSON body parser of the other APIs: UTF-8, JSON, no NUL or lone surrogates. */
function parseBody(bytes: Buffer): unknown {
  let value: unknown
  try {
    value = JSON.parse(utf8.decode(bytes))
  } catch (err) {
    throw new ApiError('InvalidPayload', `The webhook body is not valid JSON: ${(err as Error).message}`)
  }
  const problem = findJsonProblem(value)
  if (problem) throw new ApiError('InvalidPayload', `Invalid JSON body: ${problem}`)
  return value
}

/**
 * client.readWebhookBody({ offset }) → { text, offset, nextOffset, size, done }: the raw body in
 * chunks of at most 1 MB, cut on UTF-8 character boundaries. Sequential reads continue one stream;
 * a jump re-opens it.
 */
class BodyReader {
  private iterator: AsyncIterator<Buffer> | undefined
  private position = 0
  private pending: Buffer = Buffer.alloc(0)

  constructor(private readonly blobs: BlobStore, private readonly delivery: WebhookDeliveryRow) {}

  async read(args: Record<string, unknown>): Promise<unknown> {
    const size = this.delivery.size
    const offset = args.offset === undefined ? this.position : args.offset
    if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset > size) {
      throw errors.invalidPayload(`readWebhookBody: offset must be an integer from 0 to ${size}`)
    }
    if (offset !== this.position || !this.iterator) await this.open(offset)
    while (this.pending.length < READ_CHUNK_BYTES && this.position + this.pending.length < size) {
      const next = await this.iterator!.next()
      if (next.done) break
      this.pending = Buffer.concat([this.pending, next.value])
    }
    let end = Math.min(READ_CHUNK_BYTES, this.pending.length)
    // Never split a UTF-8 sequence: back off continuation bytes (10xxxxxx) unless this is the end.
    if (this.position + end < size) while (end > 0 && (this.pending[end]! & 0xc0) === 0x80) end--
    const bytes = this.pending.subarray(0, end)
    this.pending = this.pending.subarray(end)
    const start = this.position
    this.position += end
    return { text: bytes.toString('utf8'), offset: start, nextOffset: this.position, size, done: this.position >= size }
  }

  private async open(offset: number): Promise<void> {
    this.close()
    const blob = this.delivery.blobName ? await this.blobs.get(this.delivery.blobName) : undefined
    if (!blob) throw errors.notFound('Webhook body', this.delivery.id)
    this.iterator = blob.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>
    this.position = 0
    this.pending = Buffer.alloc(0)
    // Skip to the offset (reads are sequential in practice; a jump costs a re-read from the start).
    while (this.position < offset) {
      const next = await this.iterator.next()
      if (next.done) break
      const chunk = next.value
      if (this.position + chunk.length <= offset) {
        this.position += chunk.length
      } else {
        this.pending = chunk.subarray(offset - this.position)
        this.position = offset
      }
    }
  }

  close(): void {
    void this.iterator?.return?.()
    this.iterator = undefined
  }
}
