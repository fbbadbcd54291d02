// `build`: the corpus' npm dependencies (one flat tree, deps/package.json), the Botpress CLI 5.5.6 transpiled
// from packages/cli as its own build.ts does, the two generated inputs written by hand, then `bp add -y` and
// `bp build` of every project, in order. Each step is skipped when its output exists (FORCE=1 redoes all).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, lstatSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOTPRESS_DIR, CLI_BIN, DEPS_DIR, HERE, depsRequire, log, run } from './lib.mjs'

const FORCE = process.env.FORCE === '1'

/** Projects in build order: interfaces and integrations before the projects that `bp add` them. */
export const PROJECTS = [
  'interfaces/typing-indicator', 'interfaces/listable', 'interfaces/deletable', 'interfaces/proactive-conversation',
  'integrations/chat', 'integrations/webhook', 'plugins/logger', 'integrations/telegram', 'integrations/zapier',
  'integrations/make', 'integrations/linear', 'integrations/github', 'integrations/slack',
  'packages/cli/templates/webhook-message', 'packages/cli/templates/empty-bot',
  'bots/echo', 'bots/hello-world', 'bots/bugbuster',
]
/** Projects only `bp add`ed by others (their implementation is not built or run here). */
const ADD_ONLY = new Set(['integrations/chat', 'integrations/linear', 'integrations/github', 'integrations/slack'])

function link(target, path) {
  try { lstatSync(path); rmSync(path, { recursive: true, force: true }) } catch {}
  symlinkSync(target, path)
}

function deps() {
  const manifest = join(HERE, 'deps/package.json')
  mkdirSync(DEPS_DIR, { recursive: true })
  const installed = join(DEPS_DIR, 'package.json')
  if (FORCE || !existsSync(join(DEPS_DIR, 'node_modules')) || readFileSync(installed, 'utf8') !== readFileSync(manifest, 'utf8')) {
    cpSync(manifest, installed)
    log('npm install of the corpus dependencies (deps/package.json) …')
    // --legacy-peer-deps: @botpress/sdk@5.4.3 names esbuild ^0.16 as an optional peer while the CLI needs ^0.25
    const r = run('build-deps', 'npm', ['install', '--legacy-peer-deps', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: DEPS_DIR })
    if (r.status !== 0) throw new Error(`npm install failed (logs/build-deps.log):\n${r.output.slice(-3000)}`)
  }
  // The tree's workspace packages that are not on npm, linked from the tree; the tree resolves the rest from here.
  link(join(BOTPRESS_DIR, 'packages/common'), join(DEPS_DIR, 'node_modules/@botpress/common'))
  link(join(BOTPRESS_DIR, 'packages/sdk-addons'), join(DEPS_DIR, 'node_modules/@botpress/sdk-addons'))
  link(join(DEPS_DIR, 'node_modules'), join(BOTPRESS_DIR, 'node_modules'))
}

/** packages/cli/build.ts: every src/**\/*.ts transpiled (not bundled) to dist/ as CommonJS. */
async function cli() {
  const dir = join(BOTPRESS_DIR, 'packages/cli')
  if (!FORCE && existsSync(join(dir, 'dist/cli.js'))) return
  log('building the Botpress CLI (packages/cli) …')
  const walk = (d) => readdirSync(d).flatMap((f) => {
    const p = join(d, f)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : []
  })
  await depsRequire('esbuild').build({ entryPoints: walk(join(dir, 'src')), bundle: false, platform: 'node', format: 'cjs', outdir: join(dir, 'dist'), sourcemap: true, logLevel: 'warning' })
}

/** The two generated inputs: integrations/chat/src/gen/version.ts and each bot's .genenv (fake tokens). */
function generatedInputs() {
  const chatApi = readFileSync(join(BOTPRESS_DIR, 'packages/chat-api/src/version.ts'), 'utf8')
  const version = chatApi.match(/apiVersion\s*=\s*['"]([^'"]+)['"]/)[1]
  mkdirSync(join(BOTPRESS_DIR, 'integrations/chat/src/gen'), { recursive: true })
  writeFileSync(join(BOTPRESS_DIR, 'integrations/chat/src/gen/version.ts'), `export const apiVersion = "${version}"\n`)
  for (const bot of ['bots/hello-world', 'bots/bugbuster']) {
    const postinstall = JSON.parse(readFileSync(join(BOTPRESS_DIR, bot, 'package.json'), 'utf8')).scripts.postinstall
    const names = [...postinstall.matchAll(/-e (\w+)/g)].map((m) => m[1])
    mkdirSync(join(BOTPRESS_DIR, bot, '.genenv'), { recursive: true })
    writeFileSync(join(BOTPRESS_DIR, bot, '.genenv/index.ts'), names.map((n) =>
      `export const ${n} = ${JSON.stringify(n.endsWith('TELEGRAM_BOT_TOKEN') ? '123456789:corpus-fake-telegram-token' : `corpus-fake-${n.toLowerCase()}`)}\n`).join(''))
  }
}

/** `bp` in a project directory (esbuild's service sometimes dies on this machine: one retry). */
export function bp(project, args, name = `bp-${args[0]}-${project}`) {
  let r = run(name, process.execPath, [CLI_BIN, ...args], { cwd: join(BOTPRESS_DIR, project) })
  if (r.status !== 0) r = run(name, process.execPath, [CLI_BIN, ...args], { cwd: join(BOTPRESS_DIR, project) })
  return r
}

export async function build() {
  if (!existsSync(join(BOTPRESS_DIR, 'packages/cli/package.json'))) throw new Error(`BOTPRESS_DIR=${BOTPRESS_DIR} is not a Botpress checkout`)
  deps()
  await cli()
  generatedInputs()
  const results = []
  for (const p of PROJECTS) {
    const dir = join(BOTPRESS_DIR, p)
    const out = join(dir, '.botpress')
    const kind = p.split('/')[0]
    const built = kind === 'interfaces' || ADD_ONLY.has(p) ? existsSync(join(dir, 'bp_modules')) || !JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).bpDependencies : existsSync(join(out, 'dist'))
    if (!FORCE && built) { results.push({ name: `build ${p}`, ok: true, detail: 'already built' }); continue }
    const add = bp(p, ['add', '-y'])
    const b = add.status === 0 && !ADD_ONLY.has(p) && kind !== 'interfaces' ? bp(p, ['build']) : add
    const ok = add.status === 0 && b.status === 0
    results.push({ name: `build ${p}`, ok, detail: ok ? 'built' : (b.output.split('\n').filter((l) => /error|✗|×/i.test(l)).slice(0, 3).join(' | ') || b.output.slice(-300)) })
    log(`${ok ? 'ok  ' : 'FAIL'} ${p}`)
  }
  return results
}
