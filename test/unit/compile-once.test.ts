import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { compileOnce } from '../../src/store/kysely/compile-once.js'

interface Db {
  t: { id: string; n: number; note: string | null }
}

const db = new Kysely<Db>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})

describe('compileOnce', () => {
  it('compiles once and puts each argument where the built query used it, repeated ones included', () => {
    const query = compileOnce<{ id: string; n: number; note: string | null }>(['id', 'n', 'note'], (a) =>
      db.updateTable('t').set({ n: sql`n + ${a.n}`, note: a.note }).where('id', '=', a.id).where('n', '<', a.n))
    const direct = db.updateTable('t').set({ n: sql`n + ${5}`, note: null }).where('id', '=', 'x').where('n', '<', 5).compile()
    for (const args of [{ id: 'x', n: 5, note: null }, { id: 'y', n: 7, note: 'hi' }]) {
      const compiled = query(args)
      expect(compiled.sql).toBe(direct.sql)
      expect(compiled.parameters).toEqual([args.n, args.note, args.id, args.n])
    }
  })

  it('refuses a query whose parameters are not the arguments themselves, or that inlines one into its text', () => {
    expect(() => compileOnce<{ n: number }>(['n'], (a) => db.selectFrom('t').select('id').where('n', '=', a.n + 1))).toThrow(/not an argument/)
    expect(() => compileOnce<{ n: number }>(['n'], (a) => db.selectFrom('t').select('id').where('n', '=', 1).where('id', '=', String(a.n)).where('note', '=', 'constant'))).toThrow(/not an argument/)
    expect(() => compileOnce<{ id: string }>(['id'], (a) => db.selectFrom('t').select('id').where('id', '=', sql.lit(a.id)))).toThrow(/inlined/)
  })
})
