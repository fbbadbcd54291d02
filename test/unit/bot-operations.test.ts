/**
 * Each bot-facing operation is defined once (src/http/operations): the sandbox gives the prelude the table's names
 * (PASSED_THROUGH_METHODS, through the worker's options), so the prelude's client has no list of its own and passes
 * exactly the table's operations (plus callAction, the host's own) through; every method the prelude's client calls
 * on the host by name is either an operation of the table or one the host answers itself.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { HOST_OWNED_METHODS, PASSED_THROUGH_METHODS, RUNTIME_OPERATIONS, SANDBOX_OPERATION_NAMES, TABLES_OPERATIONS } from '../../src/http/operations/index.js'

const PRELUDE_DIR = new URL('../../src/runtime/prelude/', import.meta.url)
/** The prelude's modules, as one text. */
const prelude = readdirSync(PRELUDE_DIR).filter((n) => n.endsWith('.ts')).map((n) => readFileSync(new URL(n, PRELUDE_DIR), 'utf8')).join('\n')

describe('bot operations: one definition each', () => {
  it('the prelude has no list of operations of its own: the table\'s names are given to it (and callAction, the host\'s)', () => {
    // No operation of the table is named in the prelude's modules: a new one reaches bot code from the table alone.
    for (const name of SANDBOX_OPERATION_NAMES) expect(prelude, name).not.toMatch(new RegExp(`'${name}'`))
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
