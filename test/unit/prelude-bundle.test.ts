import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { bundlePrelude, parleyPrelude, preludeSource, writePrelude } from '../../src/runtime/prelude.js'
import * as intrinsics from '../../src/runtime/prelude/intrinsics.js'

/* The prelude's bundle (src/runtime/prelude.ts): what the worker evaluates, and where it comes from. */

const MODULES = fileURLToPath(new URL('../../src/runtime/prelude/', import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), 'parley-prelude-test-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('prelude bundle', () => {
  it('is one function expression, parleyPrelude\'s own text', () => {
    const { text } = preludeSource(MODULES, join(scratch, 'none.js'))
    expect(text).toBe(bundlePrelude(MODULES))
    expect(text.startsWith('(function parleyPrelude(host, helpers) {\n')).toBe(true)
    expect(`(${String(parleyPrelude)})`).toBe(text)
    // No module syntax left: the text is evaluated as a script inside the VM.
    expect(text).not.toMatch(/^\s*(import|export)\b/m)
  })

  it('captures the built-ins first: the function body opens with intrinsics.ts, before any other module', () => {
    const body = bundlePrelude(MODULES).split('\n')[1]!
    const names = Object.keys(intrinsics).sort()
    const first = body.split(';').slice(0, names.length)
    expect(first.map((statement) => /^var ([\w$]+)=/.exec(statement)?.[1]).sort()).toEqual(names)
  })

  it('a prebuilt bundle is used only when it was made from the same modules (its key)', () => {
    const { key, text } = preludeSource(MODULES, join(scratch, 'none.js'))
    const prebuilt = join(scratch, 'prelude.bundle.js')
    const marked = '(function parleyPrelude(host, helpers) { return "prebuilt" })'
    writePrelude(prebuilt, key, marked)
    expect(preludeSource(MODULES, prebuilt)).toEqual({ key, text: marked })
    // Built from other modules (a key of another build): the modules are bundled again.
    writePrelude(prebuilt, key.replace(/^./, (c) => (c === '0' ? '1' : '0')), marked)
    expect(preludeSource(MODULES, prebuilt)).toEqual({ key, text })
  })
})
