// Third step of `npm run build`, after tsc: the server's two libraries made of hundreds of small ES modules (TypeBox:
// 373 files, Kysely: 262) become one module each in dist/vendor/, and dist/**/*.js import them from there.
// Why (issue #16, idle memory): Node keeps per-module bookkeeping for every ES module it loads (module record,
// namespace, loader job, resolved URL...), a few KB each: imported alone, TypeBox takes 3.2 MB of heap as its 373
// files and 0.6 MB as one module, Kysely 2.9 and 1.7 MB. Same code, same versions (esbuild copies the modules
// into one file); the sources (and so tsx, vitest) import the packages as before.
// Plain .mjs so that it runs with node alone on tsc's output.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
const dist = join(root, 'dist')
const VENDORED = ['typebox', 'kysely']

const esbuild = await import('esbuild')
for (const name of VENDORED) {
  const hasDefault = 'default' in (await import(name))
  const result = await esbuild.build({
    stdin: { contents: `export * from '${name}'\n${hasDefault ? `export { default } from '${name}'\n` : ''}`, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile: join(dist, 'vendor', `${name}.js`),
    legalComments: 'inline',
    charset: 'ascii',
    // Comments and indentation dropped (Kysely's JSDoc is half its size), names kept: stack traces still read,
    // and the source map (node --enable-source-maps) points into node_modules.
    minifyWhitespace: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    metafile: true,
    write: false,
  })
  // One non-ASCII character makes V8 hold the whole source as a two-byte string (twice the memory). charset
  // 'ascii' escapes strings, identifiers and regular expressions; what is left is in comments (Kysely's JSDoc
  // has non-breaking spaces), where a space means the same.
  await mkdir(join(dist, 'vendor'), { recursive: true })
  for (const output of result.outputFiles) await writeFile(output.path, output.path.endsWith('.js') ? output.text.replace(/[^\x00-\x7f]/g, ' ') : output.contents)
  const inputs = Object.keys(result.metafile.inputs).length
  const bytes = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith('.js'))[1].bytes
  console.log(`vendor: dist/vendor/${name}.js ${(bytes / 1024).toFixed(1)} kB (${inputs} modules of ${name})`)
}

// Every import of a vendored package in tsc's output, rewritten to the bundle; nothing else may remain.
async function* files(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (path !== join(dist, 'vendor')) yield* files(path)
    } else if (entry.name.endsWith('.js')) yield path
  }
}
const pattern = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(?\\s*)(['"])(${VENDORED.join('|')})\\2`, 'g')
let rewritten = 0
for await (const file of files(dist)) {
  const text = await readFile(file, 'utf8')
  const next = text.replace(pattern, (_, lead, quote, name) => {
    let target = relative(dirname(file), join(dist, 'vendor', `${name}.js`)).split('\\').join('/')
    if (!target.startsWith('.')) target = `./${target}`
    return `${lead}${quote}${target}${quote}`
  })
  if (next !== text) {
    rewritten++
    await writeFile(file, next)
  }
  const left = new RegExp(`['"](${VENDORED.join('|')})(/[^'"]*)?['"]`).exec(next.replace(/\/\/# sourceMappingURL=.*$/m, ''))
  if (left && /\b(from|import|require)\b/.test(next.slice(Math.max(0, left.index - 40), left.index))) {
    console.error(`vendor: ${relative(root, file)} still imports ${left[0]} (not rewritten to dist/vendor)`)
    process.exit(1)
  }
}
console.log(`vendor: ${rewritten} files of dist/ import ${VENDORED.join(', ')} from dist/vendor/`)
