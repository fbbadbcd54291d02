/**
 * The layers are built in one direction (docs/architecture.md): the HTTP layer and the runtime call the domain;
 * the domain calls the store and the library; nothing below calls up. A runtime type in a domain file is a call up
 * in waiting (the domain then depends on how the runtime is built), so imports are checked, type-only ones too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = join(import.meta.dirname, '..', '..', 'src')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : []
  })
}

/** The relative imports of `file` (type-only ones too): the imported path, resolved, and the import's text. */
function relativeImports(file: string): { target: string; line: string }[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/^(?:import|export)\b[^'";]*?\bfrom\s+'(\.[^']+)'/gm)].map((m) => ({ target: join(file, '..', m[1]!), line: m[0] }))
}

/** The top-level folders of src/ that `file` imports from (relative imports only). */
function importedLayers(file: string): { layer: string; line: string }[] {
  return relativeImports(file).flatMap(({ target, line }) => {
    const path = relative(SRC, target)
    return path.startsWith('..') ? [] : [{ layer: path.split(sep)[0]!, line }]
  })
}

/** layer → the layers it must never import. */
const NEVER: Record<string, string[]> = {
  domain: ['runtime', 'http', 'cli', 'console', 'llm', 'compose.js', 'app.js'],
  store: ['domain', 'runtime', 'http', 'cli', 'llm', 'compose.js', 'app.js'],
  lib: ['domain', 'runtime', 'http', 'store', 'cli', 'llm', 'compose.js', 'app.js'],
  pubsub: ['domain', 'runtime', 'http', 'cli', 'llm'],
  blobs: ['domain', 'runtime', 'http', 'cli', 'llm'],
}

describe('layers', () => {
  for (const [layer, forbidden] of Object.entries(NEVER)) {
    it(`src/${layer} imports none of ${forbidden.join(', ')}`, () => {
      const violations = files(join(SRC, layer)).flatMap((file) =>
        importedLayers(file).filter((i) => forbidden.includes(i.layer)).map((i) => `${relative(SRC, file)}: ${i.line}`))
      expect(violations).toEqual([])
    })
  }

  // A service is given what it needs when it is built, never later: no late setter (attach*, set*With, use*) in src/,
  // nor a call of one in the composition root. The one cycle (beforeIncoming's client) is tied in BotRuntime's constructor.
  it('no service is wired after it is built (no attach*/use* setters, none called in compose.ts)', () => {
    const setter = /^\s+(?:public\s+)?(attach[A-Z]\w*|use[A-Z]\w*|set\w*(?:Domain|Service|Runtime|Hooks?))\s*\([^)]*\)\s*(?::\s*void\s*)?\{/gm
    const defined = files(SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(setter)].map((m) => `${relative(SRC, file)}: ${m[1]}`))
    expect(defined).toEqual([])
    const compose = readFileSync(join(SRC, 'compose.ts'), 'utf8')
    expect(compose.match(/^\s+\w+\.(?:attach|use)[A-Z]\w*\(/gm) ?? []).toEqual([])
  })

  // Files import each other in one direction too: shared types live below both users (store/rows.ts under store.ts
  // and the aggregates' repositories, domain/tables/table-rows.ts under TablesService and TableJobs).
  it('no import cycle among the files of src/ (type-only imports too)', () => {
    const sources = new Set(files(SRC))
    const edges = new Map<string, string[]>()
    for (const file of sources) {
      edges.set(file, relativeImports(file).flatMap(({ target }) => {
        const base = target.replace(/\.js$/, '')
        return ['.ts', '.tsx'].map((ext) => base + ext).filter((path) => sources.has(path))
      }))
    }
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (file: string, path: string[]): void => {
      state.set(file, 'open')
      for (const next of edges.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(SRC, f)).join(' → '))
        else if (!state.has(next)) visit(next, [...path, next])
      }
      state.set(file, 'done')
    }
    for (const file of edges.keys()) if (!state.has(file)) visit(file, [file])
    expect(cycles).toEqual([])
    expect([...edges.values()].flat().length).toBeGreaterThan(500)
  })

  it('the check sees imports (a domain file that imports the store is found)', () => {
    const store = files(join(SRC, 'domain')).flatMap((file) => importedLayers(file)).filter((i) => i.layer === 'store')
    expect(store.length).toBeGreaterThan(10)
  })
})
