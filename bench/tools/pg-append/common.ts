export interface Row { kind: string; id: string; integration_id: string; conversation_id: string; user_id: string; is_bot: number; payload: string; metadata: string | null; bot_skip: number; now: number; require_participant: boolean; channel: string }

export function columns(rows: Row[]): unknown[] {
  const c = (f: (r: Row) => unknown) => rows.map(f)
  return [c((r) => r.kind), c((r) => r.id), c((r) => r.integration_id), c((r) => r.conversation_id), c((r) => r.user_id), c((r) => r.is_bot),
    c((r) => r.payload), c((r) => r.metadata), c((r) => r.bot_skip), c((r) => r.now), c((r) => r.require_participant)]
}
