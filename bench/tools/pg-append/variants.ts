import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import type pg from 'pg'
import { columns, type Row } from './common.js'

export interface Variant {
  name: string
  sql: string
  params: (rows: Row[]) => unknown[]
  notify: 'separate' | 'folded' | 'batch' | 'none'
  setup?: string[]
  afterSeed?: string[]
  count?: (r: pg.QueryResult) => number
}

/** GROUP_APPEND as it was before bench/ANALYSIS.md §9 (revision 92bdc44): the baseline. */
const src = execFileSync('git', ['show', '92bdc44:src/store/postgres.ts'], { cwd: new URL('../../..', import.meta.url).pathname, encoding: 'utf8' })
export const GROUP_APPEND = /const GROUP_APPEND = `([^`]+)`/.exec(src)![1]!
/** The working tree's version (what Parley runs now). */
const current = /const GROUP_APPEND = `([^`]+)`/.exec(readFileSync(new URL('../../../src/store/postgres.ts', import.meta.url), 'utf8'))?.[1]

const INPUT = `WITH input AS (
  SELECT i.kind, i.id, i.integration_id, i.conversation_id, i.user_id, i.is_bot, i.payload, i.metadata, i.bot_skip, i.now, i.require_participant, i.ord
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::boolean[])
    WITH ORDINALITY AS i(kind, id, integration_id, conversation_id, user_id, is_bot, payload, metadata, bot_skip, now, require_participant, ord)
)`

const LOCKED = `locked AS (
  SELECT c.integration_id, c.id FROM conversations c JOIN input i ON c.integration_id = i.integration_id AND c.id = i.conversation_id
  ORDER BY c.integration_id, c.id FOR UPDATE OF c
)`

const PARTICIPANT = `(NOT i.require_participant OR EXISTS (
      SELECT 1 FROM participants p WHERE p.integration_id = i.integration_id AND p.conversation_id = i.conversation_id AND p.user_id = i.user_id))`

const INSERTS_JOIN = `new_messages AS (
  INSERT INTO messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at)
  SELECT i.id, i.integration_id, i.conversation_id, n.last_seq, i.user_id, i.is_bot, i.payload, i.metadata, i.bot_skip, n.last_at
  FROM next n JOIN input i ON i.ord = n.ord WHERE i.kind = 'message'
), new_events AS (
  INSERT INTO events (id, integration_id, conversation_id, seq, user_id, is_bot, payload, bot_skip, created_at)
  SELECT i.id, i.integration_id, i.conversation_id, n.last_seq, i.user_id, i.is_bot, i.payload, i.bot_skip, n.last_at
  FROM next n JOIN input i ON i.ord = n.ord WHERE i.kind = 'event'
)`

/** The UPDATE returns every input column: the INSERTs read `next` alone (no join back to input). */
const RETURNING_ALL = `RETURNING i.ord, i.kind, i.id, i.integration_id, i.conversation_id, i.user_id, i.is_bot, i.payload, i.metadata, i.bot_skip, c.last_seq, c.last_at`
const INSERTS_NEXT = `new_messages AS (
  INSERT INTO messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at)
  SELECT n.id, n.integration_id, n.conversation_id, n.last_seq, n.user_id, n.is_bot, n.payload, n.metadata, n.bot_skip, n.last_at
  FROM next n WHERE n.kind = 'message'
), new_events AS (
  INSERT INTO events (id, integration_id, conversation_id, seq, user_id, is_bot, payload, bot_skip, created_at)
  SELECT n.id, n.integration_id, n.conversation_id, n.last_seq, n.user_id, n.is_bot, n.payload, n.bot_skip, n.last_at
  FROM next n WHERE n.kind = 'event'
)`

const SET = `SET last_seq = c.last_seq + 1, last_at = CASE WHEN c.last_at >= i.now THEN c.last_at + 1 ELSE i.now END, updated_at = i.now`

const withChannels = (rows: Row[]) => [...columns(rows), rows.map((r) => r.channel)]
const sorted = (rows: Row[]) => [...rows].sort((a, b) => (a.integration_id < b.integration_id ? -1 : a.integration_id > b.integration_id ? 1 : a.conversation_id < b.conversation_id ? -1 : a.conversation_id > b.conversation_id ? 1 : 0))

const FOLDED_TAIL = `SELECT n.ord, n.last_seq, n.last_at, pg_notify(($12::text[])[n.ord], 'changed')::text AS notified FROM next n`

// "lean": returning-all + locked CTE kept (lock order guaranteed) + folded notify
const LEAN = `${INPUT}, ${LOCKED}, next AS (
  UPDATE conversations c
  ${SET}
  FROM input i JOIN locked l ON l.integration_id = i.integration_id AND l.id = i.conversation_id
  WHERE c.integration_id = i.integration_id AND c.id = i.conversation_id
    AND ${PARTICIPANT}
  ${RETURNING_ALL}
), ${INSERTS_NEXT}
`

const dropMessagesFk = `DO $$ DECLARE n text; BEGIN
  SELECT conname INTO n FROM pg_constraint WHERE conrelid = 'messages'::regclass AND contype = 'f';
  EXECUTE format('ALTER TABLE messages DROP CONSTRAINT %I', n);
  SELECT conname INTO n FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'f';
  EXECUTE format('ALTER TABLE events DROP CONSTRAINT %I', n);
END $$`
// What replaces ON DELETE CASCADE once the FKs are gone.
const cascadeTrigger = `CREATE FUNCTION conversations_cascade() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  DELETE FROM messages WHERE integration_id = OLD.integration_id AND conversation_id = OLD.id;
  DELETE FROM events WHERE integration_id = OLD.integration_id AND conversation_id = OLD.id;
  RETURN NULL; END $$;
CREATE TRIGGER conversations_cascade AFTER DELETE ON conversations FOR EACH ROW EXECUTE FUNCTION conversations_cascade()`

const PLPGSQL = `CREATE FUNCTION parley_append(kinds text[], ids text[], integ text[], convs text[], users text[], bots bigint[], payloads text[], metas text[], skips bigint[], nows bigint[], req boolean[])
RETURNS TABLE (ord bigint, last_seq bigint, last_at bigint) LANGUAGE plpgsql AS $$
DECLARE k int; s bigint; a bigint;
BEGIN
  FOR k IN SELECT g FROM generate_subscripts(ids, 1) g ORDER BY integ[g], convs[g] LOOP
    UPDATE conversations c SET last_seq = c.last_seq + 1, last_at = CASE WHEN c.last_at >= nows[k] THEN c.last_at + 1 ELSE nows[k] END, updated_at = nows[k]
      WHERE c.integration_id = integ[k] AND c.id = convs[k]
        AND (NOT req[k] OR EXISTS (SELECT 1 FROM participants p WHERE p.integration_id = integ[k] AND p.conversation_id = convs[k] AND p.user_id = users[k]))
      RETURNING c.last_seq, c.last_at INTO s, a;
    IF FOUND THEN
      IF kinds[k] = 'message' THEN
        INSERT INTO messages (id, integration_id, conversation_id, seq, user_id, is_bot, payload, metadata, bot_skip, created_at)
          VALUES (ids[k], integ[k], convs[k], s, users[k], bots[k], payloads[k], metas[k], skips[k], a);
      ELSE
        INSERT INTO events (id, integration_id, conversation_id, seq, user_id, is_bot, payload, bot_skip, created_at)
          VALUES (ids[k], integ[k], convs[k], s, users[k], bots[k], payloads[k], skips[k], a);
      END IF;
      ord := k; last_seq := s; last_at := a; RETURN NEXT;
    END IF;
  END LOOP;
END $$`

export const VARIANTS: Variant[] = [
  { name: 'base+notify', sql: GROUP_APPEND, params: columns, notify: 'separate' },
  { name: 'base-only', sql: GROUP_APPEND, params: columns, notify: 'none' },
  { name: 'base+folded', sql: GROUP_APPEND.replace(/SELECT ord, last_seq, last_at FROM next\s*$/, FOLDED_TAIL), params: withChannels, notify: 'folded' },
  {
    name: 'base+batchnotify',
    sql: GROUP_APPEND.replace(/SELECT ord, last_seq, last_at FROM next\s*$/,
      `SELECT n.ord, n.last_seq, n.last_at, b.x FROM next n CROSS JOIN (SELECT pg_notify('parley_appends', string_agg(($12::text[])[ord], ','))::text AS x FROM next) b`),
    params: withChannels, notify: 'batch',
  },
  { name: 'noFK+notify', sql: GROUP_APPEND, params: columns, notify: 'separate', afterSeed: [dropMessagesFk, cascadeTrigger] },
  { name: 'noFK-only', sql: GROUP_APPEND, params: columns, notify: 'none', afterSeed: [dropMessagesFk] },
  { name: 'ff50+notify', sql: GROUP_APPEND, params: columns, notify: 'separate', setup: [`ALTER TABLE conversations SET (fillfactor = 50)`] },
  { name: 'lean-only', sql: `${LEAN}SELECT ord, last_seq, last_at FROM next`, params: columns, notify: 'none' },
  {
    name: 'nolock-only',
    sql: `${INPUT}, next AS (
  UPDATE conversations c
  ${SET}
  FROM input i
  WHERE c.integration_id = i.integration_id AND c.id = i.conversation_id
    AND ${PARTICIPANT}
  ${RETURNING_ALL}
), ${INSERTS_NEXT}
SELECT ord, last_seq, last_at FROM next`,
    params: (rows) => columns(sorted(rows)), notify: 'none',
    count: (r) => r.rowCount ?? 0,
  },
  { name: 'plpgsql-only', sql: `SELECT ord, last_seq, last_at FROM parley_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, params: columns, notify: 'none', afterSeed: [PLPGSQL] },
  { name: 'lean+folded', sql: `${LEAN}SELECT n.ord, n.last_seq, n.last_at, pg_notify(($12::text[])[n.ord], 'changed')::text AS notified FROM next n`, params: withChannels, notify: 'folded' },
  { name: 'lean+folded+noFK', sql: `${LEAN}SELECT n.ord, n.last_seq, n.last_at, pg_notify(($12::text[])[n.ord], 'changed')::text AS notified FROM next n`, params: withChannels, notify: 'folded', afterSeed: [dropMessagesFk, cascadeTrigger] },
]

/** Ordered locking kept; the participant check runs once per row inside `locked`, which carries every input column (no join back to input). */
const LOCKED_ALL = `locked AS (
  SELECT i.ord, i.kind, i.id, i.integration_id, i.conversation_id, i.user_id, i.is_bot, i.payload, i.metadata, i.bot_skip, i.now
  FROM input i JOIN conversations c ON c.integration_id = i.integration_id AND c.id = i.conversation_id
  WHERE ${PARTICIPANT}
  ORDER BY c.integration_id, c.id FOR UPDATE OF c
)`
const LEAN2 = `${INPUT}, ${LOCKED_ALL}, next AS (
  UPDATE conversations c
  ${SET.replace(/i\.now/g, 'l.now')}
  FROM locked l
  WHERE c.integration_id = l.integration_id AND c.id = l.conversation_id
  RETURNING l.ord, l.kind, l.id, l.integration_id, l.conversation_id, l.user_id, l.is_bot, l.payload, l.metadata, l.bot_skip, c.last_seq, c.last_at
), ${INSERTS_NEXT}
`
/** Same, but `locked` carries only keys, ord and now; the INSERTs join next to input by ord. */
const LOCKED_KEYS = `locked AS (
  SELECT i.ord, i.integration_id, i.conversation_id, i.now
  FROM input i JOIN conversations c ON c.integration_id = i.integration_id AND c.id = i.conversation_id
  WHERE ${PARTICIPANT}
  ORDER BY c.integration_id, c.id FOR UPDATE OF c
)`
const LEAN3 = `${INPUT}, ${LOCKED_KEYS}, next AS (
  UPDATE conversations c
  ${SET.replace(/i\.now/g, 'l.now')}
  FROM locked l
  WHERE c.integration_id = l.integration_id AND c.id = l.conversation_id
  RETURNING l.ord, c.last_seq, c.last_at
), ${INSERTS_JOIN}
`
const FOLDED = `SELECT n.ord, n.last_seq, n.last_at, pg_notify(($12::text[])[n.ord], 'changed')::text AS notified FROM next n`
VARIANTS.push(
  { name: 'lean2-only', sql: `${LEAN2}SELECT ord, last_seq, last_at FROM next`, params: columns, notify: 'none' },
  { name: 'lean3-only', sql: `${LEAN3}SELECT ord, last_seq, last_at FROM next`, params: columns, notify: 'none' },
  { name: 'lean2+folded', sql: `${LEAN2}${FOLDED}`, params: withChannels, notify: 'folded' },
  { name: 'lean2+folded+noFK', sql: `${LEAN2}${FOLDED}`, params: withChannels, notify: 'folded', afterSeed: [dropMessagesFk, cascadeTrigger] },
  { name: 'lean2-only+noFK', sql: `${LEAN2}SELECT ord, last_seq, last_at FROM next`, params: columns, notify: 'none', afterSeed: [dropMessagesFk, cascadeTrigger] },
  { name: 'base+notify+noFK', sql: GROUP_APPEND, params: columns, notify: 'separate', afterSeed: [dropMessagesFk, cascadeTrigger] },
)

if (current?.includes('$14')) VARIANTS.push({
  name: 'current', sql: current, notify: 'folded',
  params: (rows) => [...columns(rows), rows.map((_, k) => k + 1), rows.map((r) => r.channel), rows.map(() => 'changed')],
})
VARIANTS.push(
  { name: 'lean2nk+folded+noFK', sql: `${LEAN2.replace('FOR UPDATE OF c', 'FOR NO KEY UPDATE OF c')}${FOLDED}`, params: withChannels, notify: 'folded', afterSeed: [dropMessagesFk, cascadeTrigger] },
  { name: 'lean2nk+folded', sql: `${LEAN2.replace('FOR UPDATE OF c', 'FOR NO KEY UPDATE OF c')}${FOLDED}`, params: withChannels, notify: 'folded' },
)
export const BEST_SQL = `${LEAN2.replace('FOR UPDATE OF c', 'FOR NO KEY UPDATE OF c')}${FOLDED}`
