import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runInThisContext } from 'node:vm'
import { threadId } from 'node:worker_threads'
import type { PreludeApi, PreludeHelpers, PreludeHost } from './prelude-contract.js'

/*
 * The in-sandbox runtime ("prelude") is the modules of ./prelude/ (entry: index.ts), bundled by esbuild into ONE
 * function expression, `function parleyPrelude(host, helpers) { …the modules… }`: each call evaluates the modules
 * afresh (the worker calls it once per VM, before the bot's module), and their bindings (captured built-ins, host
 * functions, the loaded bot, the entry points) stay inside that function's closure. The worker inlines its text into
 * the VM (quickjs-worker.ts SETUP); tests call it in Node as well.
 *
 * Where the text comes from, all keyed by a hash of the modules' files (and the options), so a stale
 * bundle is never used: dist/runtime/prelude.bundle.js, written by `npm run build` (scripts/build-webchat.mjs); else
 * a copy cached in node_modules/.cache by an earlier process (tests, tsx); else esbuild now (~0.2 s, then cached).
 */

/** The prelude's modules: TypeScript in src/ (tsx, vitest), tsc's output in dist/. */
const MODULES_DIR = fileURLToPath(new URL('./prelude/', import.meta.url))
/** Where `npm run build` puts the bundle (dist/runtime/prelude.bundle.js, next to this module once compiled). */
export const PREBUILT_PRELUDE = fileURLToPath(new URL('./prelude.bundle.js', import.meta.url))
/**
 * The cache of bundles made at load time, in the package's own node_modules/.cache (the same place from src/ and
 * dist/): never a shared temp folder, where another user of the machine could put a file under the (predictable) key.
 */
const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/parley-prelude/', import.meta.url))
/** How esbuild ends an ES module bundle whose entry has one export, its default: `export{name as default};`. */
const EXPORT = /export\s*\{\s*([\w$]+)\s+as\s+default\s*\};?\s*$/

const OPTIONS = {
  bundle: true,
  write: false,
  // An ES module whose one export (the entry's default) becomes the function's return value: its modules' bindings are
  // then the function's own locals (measured: as fast to evaluate in QuickJS as the one function was; an IIFE nested
  // inside it, esbuild's iife format, took ~15% longer).
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  // Indentation and comments dropped (a third of the text QuickJS parses for each VM); names kept, so the errors of
  // the prelude's own code read as they did.
  minifyWhitespace: true,
  legalComments: 'none',
  charset: 'utf8',
  logLevel: 'silent',
  // Not the project's tsconfig.json: its `strict` would add "use strict" to TypeScript input only (not to dist/'s .js).
  // The prelude runs as sloppy script code in the VM, as the one function it was before these modules.
  tsconfigRaw: '{}',
} as const

type Esbuild = typeof import('esbuild')
const load = createRequire(import.meta.url)

/**
 * The key of the bundle the modules in `dir` make: their names and contents, and the options. (Not esbuild's version:
 * resolving it costs each worker's start more than all the rest; another version bundles the same code.)
 */
function bundleKey(dir: string): string {
  const hash = createHash('sha256')
  hash.update(`${JSON.stringify(OPTIONS)}\0`)
  for (const name of readdirSync(dir).filter((n) => /\.(ts|js)$/.test(n) && !n.endsWith('.d.ts')).sort()) {
    hash.update(`${name}\0`).update(readFileSync(join(dir, name))).update('\0')
  }
  return hash.digest('hex').slice(0, 32)
}

const header = (key: string): string => `/* parley-prelude ${key} */\n`

/** Bundles the modules in `dir` into the function expression's text. */
export function bundlePrelude(dir: string = MODULES_DIR): string {
  const entry = ['index.ts', 'index.js'].map((name) => join(dir, name)).find((path) => existsSync(path))
  if (entry === undefined) throw new Error(`prelude: its entry index.ts is missing in ${dir}`)
  const result = (load('esbuild') as Esbuild).buildSync({ ...OPTIONS, entryPoints: [entry] })
  const text = result.outputFiles?.[0]?.text ?? ''
  const entryExport = EXPORT.exec(text)
  if (entryExport === null) throw new Error('prelude: the bundle does not end with its entry\'s default export')
  return `(function parleyPrelude(host, helpers) {\n${text.slice(0, entryExport.index)}return ${entryExport[1]}(host, helpers);\n})`
}

/** The text in `file` when it was bundled from the same modules (`key`), else undefined. */
function readBundle(file: string, key: string): string | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  return text.startsWith(header(key)) ? text.slice(header(key).length) : undefined
}

/** Writes the bundle with its key (to a temporary name first: other processes may read the file meanwhile). */
export function writePrelude(file: string, key: string, text: string): void {
  const temporary = `${file}.${process.pid}.${threadId}.tmp`
  writeFileSync(temporary, header(key) + text)
  renameSync(temporary, file)
}

/** The prelude's text: prebuilt, cached or bundled now (see above). */
export function preludeSource(dir: string = MODULES_DIR, prebuilt: string = PREBUILT_PRELUDE): { key: string; text: string } {
  const key = bundleKey(dir)
  const cached = join(CACHE_DIR, `${key}.js`)
  const found = readBundle(prebuilt, key) ?? readBundle(cached, key)
  if (found !== undefined) return { key, text: found }
  const text = bundlePrelude(dir)
  try {
    mkdirSync(CACHE_DIR, { recursive: true })
    writePrelude(cached, key, text)
  } catch {
    // no cache (a read-only installation): the next process bundles again
  }
  return { key, text }
}

/**
 * The prelude: `parleyPrelude(host, helpers)` runs the bundle in this realm (tests); `String(parleyPrelude)` is the
 * bundle's text, which the worker evaluates inside each VM.
 */
export const parleyPrelude = runInThisContext(preludeSource().text, { filename: 'parley-prelude.js' }) as (host: PreludeHost, helpers: PreludeHelpers) => PreludeApi
