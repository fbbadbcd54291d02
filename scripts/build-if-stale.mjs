// `npm start`'s prestart: builds (`npm run build`) only when dist/ is missing or older than what it is built from
// (src/, the build scripts, tsconfig*.json, package.json, package-lock.json), so a second `npm start` starts at once.
// A successful build leaves dist/.build-stamp; its time is what the sources are compared with.
// Plain .mjs, node alone: it runs before anything is built.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
const stamp = join(root, 'dist', '.build-stamp')
const INPUTS = ['src', 'scripts/build-webchat.mjs', 'scripts/build-word-vectors.mjs', 'scripts/bundle-vendor.mjs', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']

/** The newest modification time under `path` (a file or a folder), and the file it is from. */
function newest(path, best = { at: 0, file: '' }) {
  const s = statSync(path, { throwIfNoEntry: false })
  if (!s) return best
  if (s.isDirectory()) {
    for (const name of readdirSync(path)) newest(join(path, name), best)
  } else if (s.mtimeMs > best.at) {
    best.at = s.mtimeMs
    best.file = path
  }
  return best
}

const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0
const source = INPUTS.reduce((best, input) => newest(join(root, input), best), { at: 0, file: '' })
if (built > 0 && source.at <= built && existsSync(join(root, 'dist', 'cli.js'))) {
  process.exit(0)
}
console.log(built === 0 ? 'dist/ is not built yet: building (npm run build)…' : `${source.file.slice(root.length)} changed since the last build: building (npm run build)…`)
const startedAt = Date.now()
const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)
writeFileSync(stamp, `${new Date(startedAt).toISOString()}\n`)
// Dated when the build started: a source saved during the build is newer, and builds again next time.
utimesSync(stamp, startedAt / 1000, startedAt / 1000)
console.log(`built in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
