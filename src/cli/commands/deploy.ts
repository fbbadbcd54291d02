import { existsSync, readFileSync, statSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AdminApi, AdminApiError } from '../admin-api.js'
import { CONNECTION_OPTIONS, type CommandSpec, type Parsed, str } from '../args.js'
import { resolveConnection } from '../connection.js'
import { CliError, UsageError } from '../errors.js'
import { err, formatBytes, out, progress, success } from '../output.js'

export const deploy: CommandSpec = {
  name: 'deploy',
  summary: 'Bundle a bot written in JavaScript or TypeScript and deploy it',
  usage: ['parley deploy <file-or-folder> [--bot ID] [--dry-run] [--outfile FILE]'],
  description: [
    'Bundles the bot and everything it imports into one ES module with esbuild, then sends it with updateBot.',
    'A folder is deployed from its package.json "main", or the first of bot.ts, index.ts, src/bot.ts, src/index.ts',
    '(and the same in .js/.mjs). `import { defineBot } from \'parley/sdk\'` works without installing anything.',
    'Types are not checked here: run `tsc --noEmit` in your project for that. Code that does not load is refused',
    'by the server with the error and its line; the previous code then stays live.',
    'Without --bot (or PARLEY_BOT_ID) it never replaces another bot\'s code, the demo bot\'s included: the first deploy',
    'of a file creates a bot named after it (tagged parley-deploy = the file\'s path), later deploys of that file update',
    'that bot. `--bot ID` deploys to an existing bot (the demo bot too); `parley demo` restores the demo bot.',
  ].join('\n'),
  options: {
    bot: { type: 'string', value: 'ID', description: 'The bot to deploy to' },
    'dry-run': { type: 'boolean', description: 'Bundle only; do not deploy' },
    outfile: { type: 'string', value: 'FILE', description: 'Also write the bundle to FILE' },
    minify: { type: 'boolean', description: 'Minify the bundle (smaller; less readable errors)' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1, names: 'the bot\'s file or folder' },
  examples: ['parley deploy ./my-bot/bot.ts', 'parley deploy ./my-bot --bot 0193…', 'parley deploy bot.ts --dry-run --outfile bundle.mjs'],
}

/** The tag of bots `parley deploy` created for a file (its value: the file's absolute path, at most 1,000 characters). */
export const DEPLOY_TAG = 'parley-deploy'

/** A bot's name for a file: the folder's name for an index/bot file, else the file's name without extension. */
function botNameFor(entry: string): string {
  const base = basename(entry).replace(/\.[cm]?[jt]sx?$/, '')
  const named = ['index', 'bot', 'main'].includes(base) ? basename(dirname(entry)) : base
  return (named === 'src' ? basename(dirname(dirname(entry))) : named).slice(0, 100) || 'my-bot'
}

/**
 * Where a deploy without --bot goes: the bot an earlier deploy of this file created (found by its tag), or a new
 * bot created for it. Never the demo bot or any other bot the user did not name.
 */
async function targetFor(api: AdminApi, entry: string): Promise<{ id: string; created: boolean }> {
  const key = entry.length > 1000 ? entry.slice(-1000) : entry
  const earlier = (await api.listBots()).find((b) => b.tags?.[DEPLOY_TAG] === key)
  if (earlier) return { id: earlier.id, created: false }
  const bot = await api.createBot({ name: botNameFor(entry), tags: { [DEPLOY_TAG]: key } })
  return { id: bot.id, created: true }
}

const CANDIDATES = ['bot', 'index', 'src/bot', 'src/index'].flatMap((base) => ['.ts', '.mts', '.js', '.mjs'].map((ext) => base + ext))

/** The file to bundle for a path given on the command line. */
export function resolveEntry(target: string): string {
  const path = resolve(target)
  if (!existsSync(path)) throw new UsageError(`No such file or folder: ${target}`)
  if (statSync(path).isFile()) return path
  const pkgPath = join(path, 'package.json')
  if (existsSync(pkgPath)) {
    try {
      const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { main?: unknown; parley?: { entry?: unknown } }
      const main = typeof pkg.parley?.entry === 'string' ? pkg.parley.entry : typeof pkg.main === 'string' ? pkg.main : undefined
      if (main && existsSync(join(path, main))) return join(path, main)
    } catch {
      throw new UsageError(`${pkgPath} is not valid JSON`)
    }
  }
  for (const candidate of CANDIDATES) if (existsSync(join(path, candidate))) return join(path, candidate)
  throw new UsageError(`No bot entry file in ${target}`, `Create ${target}/bot.ts (or index.ts), set "main" in its package.json, or pass the file itself.`)
}

/** This package's SDK module, which `parley/sdk` resolves to inside bundles (no install needed). */
function sdkPath(): string {
  for (const candidate of ['../../sdk.ts', '../../sdk.js']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url))
    if (existsSync(path)) return path
  }
  throw new CliError('The Parley SDK module (sdk.js) is missing from this installation', 'Rebuild with `npm run build`.')
}

export interface Bundle {
  code: string
  exports: string[]
  warnings: string[]
}

/** One ES module for the sandbox: no Node built-ins, no imports left, modern syntax QuickJS runs. */
export async function bundleBot(entry: string, options: { minify?: boolean } = {}): Promise<Bundle> {
  const esbuild = await import('esbuild')
  const sdk = sdkPath()
  let result: Awaited<ReturnType<typeof esbuild.build>>
  try {
    result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      target: 'es2020',
      mainFields: ['module', 'main'],
      conditions: ['import', 'module', 'default'],
      resolveExtensions: ['.ts', '.tsx', '.mts', '.js', '.mjs', '.json'],
      minify: options.minify ?? false,
      // An inline source map (without the sources' text): the server maps bot.js:LINE:COLUMN of errors back to these files.
      sourcemap: 'inline',
      sourcesContent: false,
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
      absWorkingDir: dirname(entry),
      plugins: [{
        name: 'parley-sdk',
        setup(build) {
          build.onResolve({ filter: /^parley(\/sdk)?$/ }, () => ({ path: sdk }))
        },
      }],
    })
  } catch (error) {
    const failure = error as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number; lineText: string } | null }> }
    const lines = (failure.errors ?? []).map((e) => {
      const at = e.location ? `${e.location.file}:${e.location.line}:${e.location.column + 1}: ` : ''
      const builtin = /Could not resolve "(node:)?(fs|path|http|https|net|child_process|os|crypto|url|stream|util|events|buffer|process|zlib|dns|tls|worker_threads)(\/.*)?"/.test(e.text)
      return `${at}${e.text}${builtin ? ' (bot code runs in a sandbox without Node.js APIs: use ctx.client instead)' : ''}`
    })
    throw new CliError(`Bundling ${relative(process.cwd(), entry) || entry} failed:\n  ${lines.join('\n  ') || (error as Error).message}`, 'Fix the code and run `parley deploy` again.')
  }
  const file = result.outputFiles?.[0]
  if (!file) throw new CliError('esbuild produced no output')
  const meta = Object.values(result.metafile?.outputs ?? {})[0]
  return { code: file.text, exports: meta?.exports ?? [], warnings: result.warnings.map((w) => w.text) }
}

export async function runDeploy({ values, positionals }: Parsed): Promise<void> {
  const entry = resolveEntry(positionals[0]!)
  const started = Date.now()
  progress(`Bundling ${relative(process.cwd(), entry) || basename(entry)}…`)
  const bundle = await bundleBot(entry, { minify: values.minify === true })
  for (const warning of bundle.warnings) err(`warning: ${warning}`)
  const known = bundle.exports.filter((e) => ['hooks', 'actions', 'workflows', 'default'].includes(e))
  if (known.length === 0) {
    throw new CliError(
      `${basename(entry)} exports none of hooks, actions, workflows (named exports) or a default export`,
      'Export your bot: `export default defineBot({ hooks, actions, workflows })` or `export const hooks = { … }`.',
    )
  }
  progress(`Bundled ${formatBytes(Buffer.byteLength(bundle.code))} in ${Date.now() - started} ms (exports: ${bundle.exports.join(', ')})`)
  const outfile = str(values.outfile)
  if (outfile) {
    await writeFile(outfile, bundle.code)
    progress(`Wrote ${outfile}`)
  }
  if (values['dry-run']) {
    success('Bundle ready (dry run: nothing deployed)')
    return
  }

  const connection = resolveConnection(values)
  const api = new AdminApi(connection)
  // --bot, else PARLEY_BOT_ID, else this file's own bot (created at its first deploy): never the demo bot by default.
  const named = str(values.bot) || process.env.PARLEY_BOT_ID
  const target = named ? { id: named, created: false } : await targetFor(api, entry)
  const botId = target.id
  if (target.created) progress(`Created bot ${botId} for ${basename(entry)} (the demo bot is left as it is; --bot ID deploys to another bot)`)
  progress(`Deploying to bot ${botId} at ${connection.apiUrl}…`)
  const sent = Date.now()
  try {
    const bot = await api.updateBot(botId, { code: bundle.code })
    success(`Deployed "${bot.name}" (${bot.id}) in ${Date.now() - sent} ms`)
    const chat = bot.integrations?.chat
    if (chat?.enabled && chat.webchatUrl) err(`  Talk to it: ${chat.webchatUrl}   or   parley chat --bot ${bot.id}`)
    out(bot.id)
  } catch (error) {
    // A bot created for this deploy and refused its code: removed, so that the next deploy starts clean.
    if (target.created) await api.deleteBot(botId).catch(() => {})
    if (error instanceof AdminApiError && error.status === 400) {
      throw new CliError(
        `The server refused the code: ${error.message.replace(/^InvalidPayload: /, '')}`,
        target.created
          ? 'Nothing was deployed. Fix the error and run `parley deploy` again. (Line numbers refer to the bundle: use --outfile to see it.)'
          : 'The previous code is still live. Fix the error and run `parley deploy` again. (Line numbers refer to the bundle: use --outfile to see it.)',
      )
    }
    throw error
  }
}
