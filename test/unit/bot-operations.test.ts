/**
 * Each bot-facing operation is defined once (src/http/operations): the names the prelude's client passes
 * through to the host are the table's operations (plus callAction, the host's own), and every method the
 * prelude's client calls on the host is either an operation of the table or one the host answers itself.
 * A new operation added in one place only fails here.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { HOST_OWNED_METHODS, PASSED_THROUGH_METHODS, RUNTIME_OPERATIONS, SANDBOX_OPERATION_NAMES, TABLES_OPERATIONS } from '../../src/http/operations/index.js'

const prelude = readFileSync(new URL('../../src/runtime/prelude.ts', import.meta.url), 'utf8')
const names = (text: string) => [...text.matchAll(/'([A-Za-z]+)'/g)].map((m) => m[1]!)

/** The prelude's list of client methods passed to the host as they are. */
function passedThrough(): string[] {
  const list = /const RUNTIME_METHODS = \[([\s\S]*?)\]/.exec(prelude)
  if (!list) throw new Error('src/runtime/prelude.ts has no RUNTIME_METHODS list')
  return names(list[1]!.replace(/\/\/.*$/gm, ''))
}

describe('bot operations: one definition each', () => {
  it('the prelude passes through exactly the table\'s operations (and the host\'s callAction)', () => {
    expect(passedThrough()).toEqual(PASSED_THROUGH_METHODS)
    expect(PASSED_THROUGH_METHODS.filter((n) => !HOST_OWNED_METHODS.includes(n))).toEqual(SANDBOX_OPERATION_NAMES)
  })

  it('every method the prelude calls on the host is the table\'s or the host\'s', () => {
    const called = new Set([...prelude.matchAll(/\bcall\('([A-Za-z]+)'/g)].map((m) => m[1]!))
    expect(called.size).toBeGreaterThan(5)
    for (const name of called) expect([...SANDBOX_OPERATION_NAMES, ...HOST_OWNED_METHODS], name).toContain(name)
  })

  it('names are unique, none is both the table\'s and the host\'s, and each operation is in its API', () => {
    expect(new Set(SANDBOX_OPERATION_NAMES).size).toBe(SANDBOX_OPERATION_NAMES.length)
    expect(SANDBOX_OPERATION_NAMES.filter((n) => HOST_OWNED_METHODS.includes(n))).toEqual([])
    expect(RUNTIME_OPERATIONS.every((op) => op.api === 'runtime' && op.installation !== undefined)).toBe(true)
    expect(TABLES_OPERATIONS.every((op) => op.api === 'tables')).toBe(true)
  })
})
