import type { Kysely } from 'kysely'
import { QUALITY_LIMITS, type KnowledgeSearchRow, type QualityStore, type TurnFailureRow } from '../quality-store.js'

/** The tables of migrations/<dialect>/0015_bot_quality.sql (kept here so schema.ts stays untouched). */
interface QualityTables {
  bot_turn_failures: { bot_id: string; source_id: string; conversation_id: string | null; kind: string; reason: string; created_at: number }
  knowledge_searches: { bot_id: string; id: string; conversation_id: string | null; query: string; no_answer: number; best_relevance: number | null; created_at: number }
}

export class KyselyQualityStore implements QualityStore {
  private readonly db: Kysely<QualityTables>

  constructor(db: Kysely<any>) {
    this.db = db as Kysely<QualityTables>
  }

  async recordTurnFailure(row: TurnFailureRow): Promise<void> {
    await this.db.insertInto('bot_turn_failures').values({
      bot_id: row.botId, source_id: row.sourceId, conversation_id: row.conversationId, kind: row.kind, reason: row.reason, created_at: row.createdAt,
    }).onConflict((oc) => oc.columns(['bot_id', 'source_id']).doNothing()).execute()
  }

  async recordKnowledgeSearch(row: KnowledgeSearchRow): Promise<void> {
    await this.db.insertInto('knowledge_searches').values({
      bot_id: row.botId, id: row.id, conversation_id: row.conversationId, query: row.query.slice(0, QUALITY_LIMITS.queryChars),
      no_answer: row.noAnswer ? 1 : 0, best_relevance: row.bestRelevance, created_at: row.createdAt,
    }).onConflict((oc) => oc.columns(['bot_id', 'id']).doNothing()).execute()
  }
}
