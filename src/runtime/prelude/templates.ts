/*
 * Expressions, `{{ }}` templates and execute-card code: user code, compiled in the global scope (no access to the
 * prelude's bindings), each source compiled once per VM.
 */
import { AsyncFunction, FunctionCtor, isArray, objectKeys } from './intrinsics.js'
import type { Json, Scope, UserFn } from './types.js'
import { errText, isObj, pathKey, quote, setOwn, toText } from './util.js'

const compiled = new Map<string, UserFn>()
const templates = new Map<string, Array<string | { expr: string }> | null>()

export function compileExpr(src: string): UserFn {
  const key = 'e\u0000' + src
  let fn = compiled.get(key)
  if (fn === undefined) {
    fn = new FunctionCtor('event', 'state', 'vars', '"use strict";\nreturn (' + src + '\n);')
    compiled.set(key, fn)
  }
  return fn
}

export function compileCode(src: string): UserFn {
  const key = 'c\u0000' + src
  let fn = compiled.get(key)
  if (fn === undefined) {
    fn = new AsyncFunction('event', 'state', 'vars', 'client', 'actions', '"use strict";\n' + src + '\n')
    compiled.set(key, fn)
  }
  return fn
}

/** Splits a template into literal parts and `{{ expr }}` parts; null when it holds no `{{`. */
export function templateParts(s: string): Array<string | { expr: string }> | null {
  if (templates.has(s)) return templates.get(s) ?? null
  let parts: Array<string | { expr: string }> | null = null
  if (s.indexOf('{{') >= 0) {
    parts = []
    let i = 0
    for (;;) {
      const open = s.indexOf('{{', i)
      if (open < 0) {
        if (i < s.length) parts.push(s.slice(i))
        break
      }
      const close = s.indexOf('}}', open + 2)
      if (close < 0) throw new Error('unclosed "{{" in template ' + quote(s))
      const expr = s.slice(open + 2, close).trim()
      if (expr === '') throw new Error('empty "{{ }}" in template ' + quote(s))
      if (open > i) parts.push(s.slice(i, open))
      parts.push({ expr })
      i = close + 2
    }
  }
  templates.set(s, parts)
  return parts
}

/** Load-time check of every template string inside a value (syntax errors surface at deploy). */
export function checkTemplates(v: unknown, where: string): void {
  if (typeof v === 'string') {
    let parts: Array<string | { expr: string }> | null
    try {
      parts = templateParts(v)
      if (parts) for (const p of parts) if (typeof p !== 'string') compileExpr(p.expr)
    } catch (err) {
      throw new Error(where + ': invalid template: ' + errText(err))
    }
  } else if (isArray(v)) v.forEach((x, i) => checkTemplates(x, where + '[' + i + ']'))
  else if (isObj(v)) for (const k of objectKeys(v)) checkTemplates(v[k], pathKey(where, k))
}

/** Renders a template string; `raw` keeps the value's own type when the string is a single `{{ expr }}`. */
export function renderString(s: string, sc: Scope, raw: boolean): unknown {
  const parts = templateParts(s)
  if (parts === null) return s
  const values = parts.map((p) => (typeof p === 'string' ? p : compileExpr(p.expr)(sc.event, sc.state, sc.vars)))
  if (raw) {
    const exprs = parts.filter((p) => typeof p !== 'string').length
    const literal = parts.every((p) => typeof p !== 'string' || p.trim() === '')
    if (exprs === 1 && literal) return values[parts.findIndex((p) => typeof p !== 'string')]
  }
  return values.map(toText).join('')
}

export function render(v: unknown, sc: Scope, raw: boolean): unknown {
  if (typeof v === 'string') return renderString(v, sc, raw)
  if (isArray(v)) return v.map((x) => render(x, sc, raw))
  if (isObj(v)) {
    const out: Json = {}
    for (const k of objectKeys(v)) setOwn(out, k, render(v[k], sc, raw))
    return out
  }
  return v
}
