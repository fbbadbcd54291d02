// Second step of `npm run build`, after tsc: bundles the webchat with esbuild into dist/webchat/assets
// (served as-is by the server, no CDN), the sandbox's prelude into dist/runtime/prelude.bundle.js, writes
// dist/sdk.d.ts for bot authors, and makes dist/cli.js executable.
// Plain .mjs so that it runs with node alone on tsc's output.
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

const root = new URL('../', import.meta.url)
const dist = new URL('dist/', root)

const { bundleWebchat } = await import(new URL('webchat/assets.js', dist).href)
const { WEBCHAT_CSS } = await import(new URL('webchat/styles.js', dist).href)
const { WEBCHAT_UI_CSS } = await import(new URL('webchat/styles-ui.js', dist).href)
const assets = new URL('webchat/assets/', dist)
await mkdir(assets, { recursive: true })
const bundles = await bundleWebchat({ minify: true })
for (const [name, text] of Object.entries({ ...bundles, 'webchat.css': WEBCHAT_CSS + WEBCHAT_UI_CSS })) {
  await writeFile(new URL(name, assets), text)
  console.log(`webchat: dist/webchat/assets/${name} ${(Buffer.byteLength(text) / 1024).toFixed(1)} kB`)
}

// The console (/console): its app with uPlot, bundled the same way, into dist/console/assets.
const { bundleConsole } = await import(new URL('console/assets.js', dist).href)
const consoleAssets = new URL('console/assets/', dist)
await mkdir(consoleAssets, { recursive: true })
const consoleJs = await bundleConsole({ minify: true })
await writeFile(new URL('console.js', consoleAssets), consoleJs)
console.log(`console: dist/console/assets/console.js ${(Buffer.byteLength(consoleJs) / 1024).toFixed(1)} kB`)

// The in-sandbox prelude (src/runtime/prelude/*.ts), bundled once here: the workers read dist/runtime/prelude.bundle.js
// (keyed by its modules' hash: a bundle older than its modules is not used) instead of running esbuild at start.
const { PREBUILT_PRELUDE, preludeSource, writePrelude } = await import(new URL('runtime/prelude.js', dist).href)
const prelude = preludeSource()
writePrelude(PREBUILT_PRELUDE, prelude.key, prelude.text)
console.log(`prelude: dist/runtime/prelude.bundle.js ${(Buffer.byteLength(prelude.text) / 1024).toFixed(1)} kB`)

// Declarations of the SDK only (the rest of the build has no use for .d.ts files).
let ts
try {
  ts = (await import('typescript')).default
} catch {
  console.warn('sdk: typescript is not installed; dist/sdk.d.ts not written')
}
if (ts) {
  const program = ts.createProgram([fileURLToPath(new URL('src/sdk.ts', root))], {
    declaration: true, emitDeclarationOnly: true, strict: true, skipLibCheck: true,
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    rootDir: fileURLToPath(new URL('src/', root)), outDir: fileURLToPath(dist), types: [],
  })
  const result = program.emit()
  const errors = ts.getPreEmitDiagnostics(program).concat(result.diagnostics)
  if (errors.length) {
    console.error(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' }))
    process.exit(1)
  }
  console.log('sdk: dist/sdk.d.ts')
}

await chmod(new URL('cli.js', dist), 0o755)
