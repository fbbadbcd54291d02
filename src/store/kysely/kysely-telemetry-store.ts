import type { Kysely } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type { JsonObject, Page, PageRequest } from '../store.js'
import type { AnalyticsRow, IntegrationRegistrationPatch, IntegrationRegistrationRow, ObservationRow, TelemetryStore } from '../telemetry-store.js'

/** The tables of migrations/<dialect>/0007_runtime_state.sql (kept here so schema.ts stays untouched). */
interface TelemetryTables {
  runtime_analytics: { bot_id: string; name: string; day: string; count: number; updated_at: number }
  runtime_observations: { id: string; bot_id: string; name: string; data: string; refs: string; created_at: number }
  runtime_integration_registrations: {
    integration_id: string
    identifier: string | null
    schedule_register_call: string | null
    sandbox_identifiers: string | null
    updated_at: number
  }
}

export class KyselyTelemetryStore implements TelemetryStore {
  private readonly db: Kysely<TelemetryTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<TelemetryTables>
  }

  async addAnalytics(botId: string, name: string, day: string, count: number, now: number): Promise<void> {
    await this.db.insertInto('runtime_analytics').values({ bot_id: botId, name, day, count, updated_at: now })
      .onConflict((oc) => oc.columns(['bot_id', 'name', 'day']).doUpdateSet((eb) => ({ count: eb('runtime_analytics.count', '+', count), updated_at: now })))
      .execute()
  }

  async listAnalytics(botId: string, page: PageRequest): Promise<Page<AnalyticsRow>> {
    let q = this.db.selectFrom('runtime_analytics').selectAll().where('bot_id', '=', botId)
    if (page.after !== undefined) {
      const [day, name] = decodeCursor(page.after, ['string', 'string']) as [string, string]
      q = q.where((eb) => eb.or([eb('day', '<', day), eb.and([eb('day', '=', day), eb('name', '>', name)])]))
    }
    const rows = await q.orderBy('day', 'desc').orderBy('name').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map((r) => ({ botId: r.bot_id, name: r.name, day: r.day, count: Number(r.count), updatedAt: Number(r.updated_at) }))
    const last = items.at(-1)
    return { items, ...(rows.length > page.limit && last && { next: encodeCursor([last.day, last.name]) }) }
  }

  async addObservation(row: ObservationRow, keep: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const values = { bot_id: row.botId, name: row.name, data: JSON.stringify(row.data), refs: JSON.stringify(row.refs), created_at: row.createdAt }
      // Ids are the caller's (captureObservation's optional `id`), per bot: the same id again replaces the observation.
      await trx.insertInto('runtime_observations').values({ id: row.id, ...values })
        .onConflict((oc) => oc.columns(['bot_id', 'id']).doUpdateSet(values)).execute()
      const cutoff = await trx.selectFrom('runtime_observations').select(['created_at', 'id']).where('bot_id', '=', row.botId)
        .orderBy('created_at', 'desc').orderBy('id', 'desc').offset(keep).limit(1).executeTakeFirst()
      if (cutoff) {
        const at = Number(cutoff.created_at)
        await trx.deleteFrom('runtime_observations').where('bot_id', '=', row.botId)
          .where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<=', cutoff.id)])])).execute()
      }
    })
  }

  async listObservations(botId: string, page: PageRequest): Promise<Page<ObservationRow>> {
    let q = this.db.selectFrom('runtime_observations').selectAll().where('bot_id', '=', botId)
    if (page.after !== undefined) {
      const [at, id] = decodeCursor(page.after, ['number', 'string']) as [number, string]
      q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', id)])]))
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute()
    const items = rows.slice(0, page.limit).map((r) => ({
      id: r.id, botId: r.bot_id, name: r.name, data: JSON.parse(r.data) as JsonObject, refs: JSON.parse(r.refs) as Record<string, string>, createdAt: Number(r.created_at),
    }))
    const last = items.at(-1)
    return { items, ...(rows.length > page.limit && last && { next: encodeCursor([last.createdAt, last.id]) }) }
  }

  async setRegistration(integrationId: string, patch: IntegrationRegistrationPatch, now: number): Promise<IntegrationRegistrationRow> {
    const current = await this.getRegistration(integrationId)
    const next: IntegrationRegistrationRow = {
      integrationId,
      identifier: patch.identifier !== undefined ? patch.identifier : (current?.identifier ?? null),
      scheduleRegisterCall: patch.scheduleRegisterCall ?? current?.scheduleRegisterCall ?? null,
      sandboxIdentifiers: patch.sandboxIdentifiers !== undefined ? patch.sandboxIdentifiers : (current?.sandboxIdentifiers ?? null),
      updatedAt: now,
    }
    const values = {
      identifier: next.identifier, schedule_register_call: next.scheduleRegisterCall,
      sandbox_identifiers: next.sandboxIdentifiers === null ? null : JSON.stringify(next.sandboxIdentifiers), updated_at: now,
    }
    await this.db.insertInto('runtime_integration_registrations').values({ integration_id: integrationId, ...values })
      .onConflict((oc) => oc.column('integration_id').doUpdateSet(values)).execute()
    return next
  }

  async getRegistration(integrationId: string): Promise<IntegrationRegistrationRow | undefined> {
    const r = await this.db.selectFrom('runtime_integration_registrations').selectAll().where('integration_id', '=', integrationId).executeTakeFirst()
    return r && {
      integrationId: r.integration_id, identifier: r.identifier, scheduleRegisterCall: r.schedule_register_call,
      sandboxIdentifiers: r.sandbox_identifiers === null ? null : (JSON.parse(r.sandbox_identifiers) as JsonObject), updatedAt: Number(r.updated_at),
    }
  }
}
