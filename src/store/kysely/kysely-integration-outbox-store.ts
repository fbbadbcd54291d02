import type { Kysely } from 'kysely'
import type { IntegrationOutboxStore, OutboxCursor } from '../integration-outbox-store.js'

/** The tables this part reads and writes (migrations/<dialect>/0016_integration_outbox.sql; kept here so schema.ts stays untouched). */
interface OutboxTables {
  integration_outbox: { integration_id: string; conversation_id: string; delivered_seq: number; lease_owner: string | null; lease_until: number }
  conversations: { integration_id: string; id: string; last_seq: number }
  integration_installations: { integration_id: string }
}

/** Portable SQL only: conditional UPDATE … RETURNING for the lease, INSERT … SELECT … ON CONFLICT DO NOTHING for a missing row. */
export class KyselyIntegrationOutboxStore implements IntegrationOutboxStore {
  private readonly db: Kysely<OutboxTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<OutboxTables>
  }

  async behind(now: number, limit: number): Promise<{ integrationId: string; conversationId: string }[]> {
    const rows = await this.db.selectFrom('conversations as c')
      .innerJoin('integration_installations as i', 'i.integration_id', 'c.integration_id')
      .leftJoin('integration_outbox as o', (join) => join.onRef('o.integration_id', '=', 'c.integration_id').onRef('o.conversation_id', '=', 'c.id'))
      .select(['c.integration_id', 'c.id'])
      .where((eb) => eb.and([
        eb(eb.fn.coalesce('o.delivered_seq', eb.lit(0)), '<', eb.ref('c.last_seq')),
        eb.or([eb('o.lease_owner', 'is', null), eb('o.lease_until', '<', now)]),
      ]))
      .limit(limit)
      .execute()
    return rows.map((r) => ({ integrationId: r.integration_id, conversationId: r.id }))
  }

  private takeLease(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number) {
    return this.db.updateTable('integration_outbox')
      .set({ lease_owner: owner, lease_until: now + ttlMs })
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId)
      .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
      .returning('delivered_seq')
      .executeTakeFirst()
  }

  async claim(integrationId: string, conversationId: string, owner: string, now: number, ttlMs: number): Promise<OutboxCursor | undefined> {
    let taken = await this.takeLease(integrationId, conversationId, owner, now, ttlMs)
    if (!taken) {
      // No row yet (nothing delivered in this conversation), or another owner's lease: make the row when missing, once.
      const made = await this.db.insertInto('integration_outbox')
        .columns(['integration_id', 'conversation_id'])
        .expression((eb) => eb.selectFrom('conversations').select(['integration_id', 'id']).where('integration_id', '=', integrationId).where('id', '=', conversationId))
        .onConflict((oc) => oc.columns(['integration_id', 'conversation_id']).doNothing())
        .executeTakeFirst()
      if (Number(made.numInsertedOrUpdatedRows ?? 0) === 0) return undefined
      taken = await this.takeLease(integrationId, conversationId, owner, now, ttlMs)
      if (!taken) return undefined
    }
    const last = await this.db.selectFrom('conversations').select('last_seq').where('integration_id', '=', integrationId).where('id', '=', conversationId).executeTakeFirst()
    if (!last) return undefined
    return { deliveredSeq: Number(taken.delivered_seq), lastSeq: Number(last.last_seq) }
  }

  async renew(integrationId: string, conversationId: string, owner: string, until: number): Promise<boolean> {
    const r = await this.db.updateTable('integration_outbox').set({ lease_until: until })
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('lease_owner', '=', owner)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async advance(integrationId: string, conversationId: string, owner: string, seq: number): Promise<boolean> {
    const r = await this.db.updateTable('integration_outbox')
      .set((eb) => ({ delivered_seq: eb.case().when('delivered_seq', '<', seq).then(seq).else(eb.ref('delivered_seq')).end() }))
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('lease_owner', '=', owner)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async release(integrationId: string, conversationId: string, owner: string): Promise<OutboxCursor | undefined> {
    await this.db.updateTable('integration_outbox').set({ lease_owner: null, lease_until: 0 })
      .where('integration_id', '=', integrationId).where('conversation_id', '=', conversationId).where('lease_owner', '=', owner)
      .execute()
    return this.cursor(integrationId, conversationId)
  }

  async cursor(integrationId: string, conversationId: string): Promise<OutboxCursor | undefined> {
    const r = await this.db.selectFrom('conversations as c')
      .leftJoin('integration_outbox as o', (join) => join.onRef('o.integration_id', '=', 'c.integration_id').onRef('o.conversation_id', '=', 'c.id'))
      .select(['c.last_seq', 'o.delivered_seq'])
      .where('c.integration_id', '=', integrationId).where('c.id', '=', conversationId)
      .executeTakeFirst()
    return r && { deliveredSeq: Number(r.delivered_seq ?? 0), lastSeq: Number(r.last_seq) }
  }
}
