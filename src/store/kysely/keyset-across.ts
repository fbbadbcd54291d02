import type { Kysely, SelectQueryBuilder } from 'kysely'
import { decodeCursor, encodeCursor } from '../cursor.js'
import type { Page, PageRequest } from '../store.js'
import type { Database } from './schema.js'

/** A row of a list over several integrations: its key is (sort value, id, integration id). */
export interface KeyedRow { id: string; integration_id: string }

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the branch's tables and aliases vary by list
type Branch<R> = SelectQueryBuilder<any, any, R>

export interface KeysetOrder<R> {
  /** The sort column as the branch names it (`c.created_at`) and as its result names it (`created_at`). */
  column: string
  name: string
  /** The id and integration id columns as the branch names them (`c.id`, `c.integration_id`). */
  idColumn: string
  integrationColumn: string
  desc: boolean
  /** The sort value of a row (for the next token). */
  valueOf: (row: R) => number
}

/**
 * One page of a list that spans several of a bot's integrations (Runtime listUsers, listConversations…), in one
 * statement: a branch per integration, each ordered and limited on its own index (integration_id, sort column, id),
 * under UNION ALL, merged by the outer ORDER BY. A page reads at most `limit + 1` rows of each integration however
 * many rows the bot has, where `integration_id IN (…) ORDER BY …` would sort all of them. The token is
 * (sort value, id, integration id): ids are unique within an integration only, so two integrations' rows with the
 * same sort value and id both get their turn.
 */
export async function keysetAcross<R extends KeyedRow>(
  db: Kysely<Database>,
  integrationIds: string[],
  page: PageRequest,
  order: KeysetOrder<R>,
  branch: (integrationId: string) => Branch<R>,
): Promise<Page<R>> {
  if (integrationIds.length === 0) return { items: [] }
  const after = page.after === undefined ? undefined : decodeCursor(page.after, ['number', 'string', 'string']) as [number, string, string]
  const dir = order.desc ? 'desc' : 'asc'
  const op = order.desc ? '<' : '>'
  const ordered = (integrationId: string): Branch<R> => {
    let q = branch(integrationId)
    if (after) {
      const [at, id, fromIntegration] = after
      // (sort, id, integration) strictly past the token, compared by the database (its collation orders the outer query)
      q = q.where((eb) => eb.or([
        eb(order.column, op, at),
        eb.and([eb(order.column, '=', at), eb(order.idColumn, op, id)]),
        eb.and([eb(order.column, '=', at), eb(order.idColumn, '=', id), eb(order.integrationColumn, op, fromIntegration)]),
      ]))
    }
    return q.orderBy(order.column, dir).orderBy(order.idColumn, dir).limit(page.limit + 1)
  }
  let rows: R[]
  if (integrationIds.length === 1) {
    rows = await ordered(integrationIds[0]!).execute()
  } else {
    const parts = integrationIds.map((id, i) => db.selectFrom(ordered(id).as(`b${i}`)).selectAll() as Branch<R>)
    const union = parts.slice(1).reduce((all, part) => all.unionAll(part), parts[0]!)
    rows = await db.selectFrom(union.as('u')).selectAll()
      .orderBy(`u.${order.name}` as never, dir).orderBy('u.id' as never, dir).orderBy('u.integration_id' as never, dir)
      .limit(page.limit + 1).execute() as R[]
  }
  if (rows.length <= page.limit) return { items: rows }
  const items = rows.slice(0, page.limit)
  const last = items[items.length - 1]!
  return { items, next: encodeCursor([order.valueOf(last), last.id, last.integration_id]) }
}
