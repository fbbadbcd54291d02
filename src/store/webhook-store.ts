/**
 * The webhook integration's delivery queue (migrations/<dialect>/0005_webhooks.sql). A row exists
 * once a delivery's body is durably stored; the caller is answered 200 only after that, so an
 * acknowledged delivery survives a restart. Workers claim rows with a lease: on PostgreSQL several
 * instances share the queue and each delivery is claimed by one at a time.
 */
export type WebhookDeliveryStatus = 'pending' | 'done' | 'failed'

export interface WebhookDeliveryRow {
  id: string
  integrationId: string
  idempotencyKey: string | null
  /** The body in the BlobStore; null once processed (the blob is deleted, the row stays for idempotency). */
  blobName: string | null
  size: number
  contentType: string
  status: WebhookDeliveryStatus
  /** Claims so far (a crash mid-processing leaves an expired lease and the delivery is claimed again). */
  attempts: number
  leaseOwner: string | null
  leaseUntil: number
  createdAt: number
  processedAt: number | null
  /** The request besides its body (migrations 0025): { method, path, query, headers }; null for rows queued before. */
  request: WebhookRequestRecord | null
}

export interface WebhookRequestRecord { method: string; path: string; query: string; headers: Record<string, string> }

export type NewWebhookDelivery = Pick<WebhookDeliveryRow, 'id' | 'integrationId' | 'idempotencyKey' | 'blobName' | 'size' | 'contentType' | 'createdAt'> & { request?: WebhookRequestRecord | null | undefined }

export interface WebhookStore {
  /**
   * Queues a delivery. With an idempotency key already used by this integration nothing is inserted
   * and the earlier delivery is returned (`created: false`). Undefined, with nothing inserted, when
   * the integration does not exist (its bot or workspace was deleted, possibly concurrently).
   */
  enqueue(delivery: NewWebhookDelivery): Promise<{ delivery: WebhookDeliveryRow; created: boolean } | undefined>
  findByIdempotencyKey(integrationId: string, key: string): Promise<WebhookDeliveryRow | undefined>
  get(id: string): Promise<WebhookDeliveryRow | undefined>
  /** Leases the oldest pending delivery whose lease is free or expired, or undefined. Atomic across instances. */
  claim(owner: string, now: number, leaseMs: number): Promise<WebhookDeliveryRow | undefined>
  /** Ends a claimed delivery (only if `owner` still holds it): done or failed, body reference cleared. False if the lease was lost. */
  finish(id: string, owner: string, status: 'done' | 'failed', now: number): Promise<boolean>
  /** Moves the lease of a delivery `owner` still holds (a long bot turn). */
  extendLease(id: string, owner: string, until: number): Promise<void>
  /** Gives a claimed delivery back (shutdown): pending again, lease free. */
  release(id: string, owner: string): Promise<void>
}
