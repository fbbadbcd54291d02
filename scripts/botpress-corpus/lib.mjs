// Shared pieces of the Botpress corpus runner (see corpus.mjs and docs/testing.md, "Botpress's own code"):
// settings, child processes, a Parley to talk to, the Admin API, what `bp deploy` would send.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, createWriteStream } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

export const HERE = dirname(fileURLToPath(import.meta.url))
export const PARLEY_DIR = resolve(HERE, '../..')
export const BOTPRESS_DIR = resolve(process.env.BOTPRESS_DIR ?? '/work/corpus/botpress')
export const WORK_DIR = resolve(process.env.CORPUS_WORK_DIR ?? join(dirname(BOTPRESS_DIR), 'work'))
export const LOG_DIR = join(WORK_DIR, 'logs')
export const DEPS_DIR = join(WORK_DIR, 'deps')
export const CLI_BIN = join(BOTPRESS_DIR, 'packages/cli/bin.js')
mkdirSync(LOG_DIR, { recursive: true })

/** require() from the corpus dependencies (esbuild, @botpress/client 1.35.0, …), never from Parley's. */
export const depsRequire = createRequire(join(DEPS_DIR, 'package.json'))

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
export const log = (...a) => console.log('[corpus]', ...a)

/** Runs a command to completion, its output in logs/<name>.log; returns { status, output }. */
export function run(name, cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts, env: { ...process.env, ...opts.env } })
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`
  writeLog(name, `$ ${cmd} ${args.join(' ')}  (cwd ${opts.cwd ?? process.cwd()})\n${output}`)
  return { status: r.status ?? 1, output }
}

/** As `run`, without blocking this process (in-process fakes and proxies keep answering meanwhile). */
export function runAsync(name, cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    let output = ''
    child.stdout.on('data', (c) => (output += c))
    child.stderr.on('data', (c) => (output += c))
    child.on('close', (status) => {
      children.delete(child)
      writeLog(name, `$ ${cmd} ${args.join(' ')}  (cwd ${opts.cwd ?? process.cwd()})\n${output}`)
      resolve({ status: status ?? 1, output })
    })
  })
}

function writeLog(name, text) {
  const s = createWriteStream(join(LOG_DIR, `${name.replace(/[^\w.-]+/g, '_')}.log`), { flags: 'a' })
  s.end(text + '\n')
}

/** Child processes started by this run; all are stopped (by their pid) when it ends. */
const children = new Set()
export function start(name, cmd, args, opts = {}) {
  const out = createWriteStream(join(LOG_DIR, `${name}.log`), { flags: 'w' })
  const child = spawn(cmd, args, { ...opts, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  const keep = (c) => { text += c; if (text.length > 4_000_000) text = text.slice(-2_000_000); out.write(c) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  children.add(child)
  child.on('exit', () => children.delete(child))
  return { child, output: () => text, name }
}
export async function stopAll() {
  for (const c of children) c.kill('SIGTERM')
  for (let i = 0; i < 50 && children.size; i++) await sleep(100)
  for (const c of children) c.kill('SIGKILL')
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => stopAll().then(() => process.exit(130)))

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)) })
    s.on('error', rej)
  })
}

/** Polls `check` until it returns a truthy value (or throws the last error after `ms`). */
export async function waitFor(what, check, ms = 20_000, every = 100) {
  const deadline = Date.now() + ms
  let last
  for (;;) {
    try { const v = await check(); if (v) return v } catch (e) { last = e }
    if (Date.now() > deadline) throw new Error(`timed out (${ms} ms) waiting for ${what}${last ? `: ${last.message}` : ''}`)
    await sleep(every)
  }
}

/**
 * The Parley to run against: PARLEY_URL + PARLEY_TOKEN (+ PARLEY_WORKSPACE_ID, else the first workspace) when
 * given, else one started from PARLEY_DIR's dist/ on a free port with a fresh data directory.
 */
export async function parley() {
  if (process.env.PARLEY_URL) {
    const apiUrl = process.env.PARLEY_URL.replace(/\/+$/, '')
    const token = process.env.PARLEY_TOKEN
    if (!token) throw new Error('PARLEY_URL needs PARLEY_TOKEN (a personal access token)')
    let workspaceId = process.env.PARLEY_WORKSPACE_ID
    if (!workspaceId) {
      const r = await fetch(`${apiUrl}/v1/admin/workspaces`, { headers: { authorization: `Bearer ${token}` } })
      workspaceId = (await r.json()).workspaces?.[0]?.id
    }
    return { apiUrl, token, workspaceId, process: null }
  }
  const main = join(PARLEY_DIR, 'dist/cli.js')
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` in ${PARLEY_DIR}, or give PARLEY_URL and PARLEY_TOKEN`)
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-corpus-'))
  const proc = start('parley', process.execPath, [main, 'serve'], {
    cwd: PARLEY_DIR,
    env: { PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir, ...parleyEnv() },
  })
  const credentials = await waitFor('Parley to start (logs/parley.log)', async () => {
    if (proc.child.exitCode !== null) throw new Error(`Parley exited: ${proc.output().slice(-2000)}`)
    const file = join(dataDir, 'credentials.json')
    if (!existsSync(file)) return null
    const r = await fetch(`http://127.0.0.1:${port}/readyz`)
    return r.ok && JSON.parse(readFileSync(file, 'utf8'))
  }, 60_000, 200)
  log(`Parley ${credentials.apiUrl} (data ${dataDir}, log ${join(LOG_DIR, 'parley.log')})`)
  return { ...credentials, process: proc, dataDir }
}

/** PARLEY_ENV_<NAME>=value gives Parley's setting <NAME>=value to a Parley this script starts. */
function parleyEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('PARLEY_ENV_')).map(([k, v]) => [k.slice(11), v]))
}

/** @botpress/client (the corpus' own version) as an admin of the workspace. */
export function adminClient(p) {
  const { Client } = depsRequire('@botpress/client')
  return new Client({ apiUrl: p.apiUrl, token: p.token, workspaceId: p.workspaceId, timeout: 30_000 })
}
/** @botpress/client as a bot (its API key). */
export function botClient(p, botId, token) {
  const { Client } = depsRequire('@botpress/client')
  return new Client({ apiUrl: p.apiUrl, token, botId, timeout: 30_000 })
}

/** An error of @botpress/client summarised as "STATUS Type: message". */
export const errText = (e) => `${e?.code ?? e?.response?.status ?? ''} ${e?.type ?? e?.name ?? ''}: ${e?.message ?? e}`.trim()

/** Loads a project's *.definition.ts as the Botpress CLI does (bundled with esbuild, then required). */
export async function loadDefinition(projectDir, file) {
  const esbuild = depsRequire('esbuild')
  const outfile = join(DEPS_DIR, 'definitions', `${projectDir.replace(/[^\w]+/g, '_')}.cjs`)
  await esbuild.build({
    entryPoints: [join(projectDir, file)], bundle: true, platform: 'node', format: 'cjs', outfile, logLevel: 'error',
    external: ['@botpress/sdk', '@botpress/client'], nodePaths: [join(DEPS_DIR, 'node_modules')],
  })
  delete depsRequire.cache?.[outfile]
  const mod = createRequire(outfile)(outfile)
  return mod.default ?? mod
}

/**
 * What `bp deploy` sends to createIntegration, made by the Botpress CLI's own functions (its built dist/):
 * the definition's zod schemas as JSON schemas. Without `code`, `icon` and `readme` (Parley does not run a
 * bundle it is given; the integration is served here). Secrets get the values of `secrets`.
 */
export async function integrationBody(projectDir, secrets = {}) {
  const cli = (m) => createRequire(CLI_BIN)(join(BOTPRESS_DIR, 'packages/cli/dist', m))
  const def = await loadDefinition(projectDir, 'integration.definition.ts')
  const body = await cli('api/integration-body.js').prepareCreateIntegrationBody(def)
  const toJson = (z) => cli('utils/schema-utils.js').mapZodToJsonSchema(z, {})
  if (def.configuration) body.configuration = { schema: await toJson(def.configuration), identifier: {} }
  if (def.configurations) {
    body.configurations = {}
    for (const [k, c] of Object.entries(def.configurations)) body.configurations[k] = { title: c.title, description: c.description, schema: await toJson(c), identifier: {} }
  }
  body.secrets = Object.fromEntries(Object.keys(def.secrets ?? {}).map((k) => [k, secrets[k] ?? `corpus-fake-${k.toLowerCase()}`]))
  if (def.interfaces && Object.keys(def.interfaces).length) body.interfaces = {}
  return { def, body }
}

/** What `bp deploy` sends to createBot/updateBot for a bot definition (without the integrations and code). */
export async function botBody(projectDir) {
  const cli = (m) => createRequire(CLI_BIN)(join(BOTPRESS_DIR, 'packages/cli/dist', m))
  const def = await loadDefinition(projectDir, 'bot.definition.ts')
  return { def, body: await cli('api/bot-body.js').prepareCreateBotBody(def) }
}

/** Runs `check` (answering a detail string or throwing) as one line of the summary table. */
export async function step(results, name, check) {
  try {
    const detail = await check()
    results.push({ name, ok: true, detail: typeof detail === 'string' ? detail : '' })
  } catch (e) {
    results.push({ name, ok: false, detail: String(e?.message ?? e).replace(/\s+/g, ' ').slice(0, 300) })
  }
}
export const expect = (cond, why) => { if (!cond) throw new Error(why) }
