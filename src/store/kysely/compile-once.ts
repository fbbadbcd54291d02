import { CompiledQuery, type Compilable } from 'kysely'

/**
 * A Kysely query built and compiled once, run many times with other values: Kysely rebuilds and
 * recompiles a query's whole operation tree on every call, which cost more CPU than the rest of
 * createMessage's PostgreSQL append (bench/RESULTS.md, backends). `build` receives a marker for each
 * argument instead of its value; every parameter of the compiled query must be one of the markers
 * (a value Kysely inlined into the SQL text, or a parameter computed from an argument, is refused
 * here, at construction). The returned function puts the arguments where their markers were.
 */
export function compileOnce<A extends Record<string, unknown>>(keys: readonly (keyof A & string)[], build: (args: A) => Compilable): (args: A) => CompiledQuery {
  const markers = Object.fromEntries(keys.map((key) => [key, `\u0001parley-argument:${key}\u0001`]))
  const compiled = build(markers as A).compile()
  const byMarker = new Map(keys.map((key) => [markers[key], key]))
  const order = compiled.parameters.map((p) => {
    const key = byMarker.get(p as string)
    if (key === undefined) throw new Error(`compileOnce: the query has a parameter that is not an argument: ${JSON.stringify(p)}`)
    return key
  })
  if (compiled.sql.includes('\u0001parley-argument:')) throw new Error('compileOnce: an argument was inlined into the SQL text')
  return (args) => CompiledQuery.raw(compiled.sql, order.map((key) => args[key]))
}
