import type { Generated, Kysely, Selectable } from 'kysely'
import { isForeignKeyViolation } from '../../lib/errors.js'
import type { NewWebhookDelivery, WebhookDeliveryRow, WebhookRequestRecord, WebhookDeliveryStatus, WebhookStore } from '../webhook-store.js'

/** The table of migrations/<dialect>/0005_webhooks.sql (kept here so schema.ts stays untouched). */
interface WebhookTables {
  webhook_deliveries: {
    id: string
    integration_id: string
    idempotency_key: string | null
    blob_name: string | null
    size: number
    content_type: string
    status: string
    attempts: number
    lease_owner: string | null
    lease_until: number
    created_at: number
    processed_at: number | null
    /** 0025 */
    request: Generated<string | null>
  }
  integrations: { id: string; bot_id: string }
}

type Record = Selectable<WebhookTables['webhook_deliveries']>

// PostgreSQL BIGINT columns come back as strings: Number() for both engines.
const toRow = (r: Record): WebhookDeliveryRow => ({
  id: r.id,
  integrationId: r.integration_id,
  idempotencyKey: r.idempotency_key,
  blobName: r.blob_name,
  size: Number(r.size),
  contentType: r.content_type,
  status: r.status as WebhookDeliveryStatus,
  attempts: Number(r.attempts),
  leaseOwner: r.lease_owner,
  leaseUntil: Number(r.lease_until),
  createdAt: Number(r.created_at),
  processedAt: r.processed_at === null ? null : Number(r.processed_at),
  request: r.request ? (JSON.parse(r.request) as WebhookRequestRecord) : null,
})

/** Portable SQL only (ON CONFLICT DO NOTHING, UPDATE … RETURNING with a sub-select). */
export class KyselyWebhookStore implements WebhookStore {
  private readonly db: Kysely<WebhookTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<WebhookTables>
  }

  async enqueue(d: NewWebhookDelivery): Promise<{ delivery: WebhookDeliveryRow; created: boolean } | undefined> {
    let inserted: Record | undefined
    try {
      inserted = await this.db
        .insertInto('webhook_deliveries')
        .values({
          id: d.id, integration_id: d.integrationId, idempotency_key: d.idempotencyKey, blob_name: d.blobName, size: d.size,
          content_type: d.contentType, status: 'pending', attempts: 0, lease_owner: null, lease_until: 0, created_at: d.createdAt, processed_at: null,
          ...(d.request && { request: JSON.stringify(d.request) }),
        })
        .onConflict((oc) => oc.columns(['integration_id', 'idempotency_key']).doNothing())
        .returningAll()
        .executeTakeFirst()
    } catch (err) {
      // The integration is gone (its bot or workspace deleted, possibly while the body streamed in):
      // the integration_id reference is the table's only foreign key.
      if (isForeignKeyViolation(err)) return undefined
      throw err
    }
    if (inserted) return { delivery: toRow(inserted), created: true }
    const existing = d.idempotencyKey === null ? undefined : await this.findByIdempotencyKey(d.integrationId, d.idempotencyKey)
    // Conflicted with a delivery that has gone since: rows are only ever deleted with their integration.
    if (!existing) return undefined
    return { delivery: existing, created: false }
  }

  async findByIdempotencyKey(integrationId: string, key: string): Promise<WebhookDeliveryRow | undefined> {
    const r = await this.db.selectFrom('webhook_deliveries').selectAll()
      .where('integration_id', '=', integrationId).where('idempotency_key', '=', key).executeTakeFirst()
    return r && toRow(r)
  }

  async get(id: string): Promise<WebhookDeliveryRow | undefined> {
    const r = await this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()
    return r && toRow(r)
  }

  async claim(owner: string, now: number, leaseMs: number): Promise<WebhookDeliveryRow | undefined> {
    // The outer WHERE repeats the sub-select's conditions: on PostgreSQL a concurrent claimer that
    // waited for the row lock re-checks them against the committed row and updates nothing.
    const r = await this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ lease_owner: owner, lease_until: now + leaseMs, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', (eb) =>
        eb.selectFrom('webhook_deliveries').select('id')
          .where('status', '=', 'pending').where('lease_until', '<=', now)
          .orderBy('created_at').orderBy('id').limit(1))
      .where('status', '=', 'pending')
      .where('lease_until', '<=', now)
      .returningAll()
      .executeTakeFirst()
    return r && toRow(r)
  }

  async finish(id: string, owner: string, status: 'done' | 'failed', now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('webhook_deliveries')
      .set({ status, processed_at: now, blob_name: null, lease_owner: null })
      .where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'pending')
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  async extendLease(id: string, owner: string, until: number): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set({ lease_until: until })
      .where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'pending').execute()
  }

  async release(id: string, owner: string): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_until: 0 })
      .where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'pending').execute()
  }

  /** Blob names of the bot's deliveries still holding a body (Store.deleteBot lists them in its transaction). */
  async blobNamesOfBot(botId: string, db: Kysely<any> = this.db): Promise<string[]> {
    const rows = await (db as Kysely<WebhookTables>).selectFrom('webhook_deliveries as d')
      .innerJoin('integrations as i', 'i.id', 'd.integration_id')
      .select('d.blob_name').where('i.bot_id', '=', botId).where('d.blob_name', 'is not', null).execute()
    return rows.map((r) => r.blob_name!)
  }
}
