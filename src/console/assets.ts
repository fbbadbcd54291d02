import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { CONSOLE_CSS } from './styles.js'

const require = createRequire(import.meta.url)

export type ConsoleAssetName = 'console.js' | 'console.css'
export interface ConsoleAsset { body: Buffer; type: string; etag: string }

/** Where `npm run build` puts the bundle: dist/console/assets. */
export const CONSOLE_PREBUILT_DIR = fileURLToPath(new URL('./assets/', import.meta.url))

function entry(): string {
  for (const ext of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`./client/main${ext}`, import.meta.url))
    if (existsSync(path)) return path
  }
  throw new Error(`console: the browser source client/main.ts is missing next to ${fileURLToPath(import.meta.url)}`)
}

/** The console's browser app with uPlot in it (esbuild, as the webchat): no CDN, no outside import. */
export async function bundleConsole(options: { minify?: boolean } = {}): Promise<string> {
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    entryPoints: [entry()], bundle: true, write: false, platform: 'browser', target: ['es2020'], format: 'esm',
    minify: options.minify ?? true, legalComments: 'none', charset: 'utf8', logLevel: 'silent',
  })
  const file = result.outputFiles[0]
  if (!file) throw new Error('console: esbuild produced no output')
  return file.text
}

/** uPlot's stylesheet and the console's own. */
export async function consoleCss(): Promise<string> {
  const uplot = await readFile(require.resolve('uplot/dist/uPlot.min.css'), 'utf8')
  return `${uplot}\n${CONSOLE_CSS}`
}

const asset = (type: string, body: Buffer): ConsoleAsset => ({
  body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
})

/** The prebuilt bundle when `npm run build` made it, else bundled once in memory from the sources. */
export class ConsoleAssets {
  private loading: Promise<Record<ConsoleAssetName, ConsoleAsset>> | undefined

  constructor(private readonly prebuiltDir: string = CONSOLE_PREBUILT_DIR) {}

  get(name: ConsoleAssetName): Promise<ConsoleAsset> {
    return this.all().then((all) => all[name])
  }

  async version(): Promise<string> {
    const all = await this.all()
    return createHash('sha256').update(all['console.js'].etag).update(all['console.css'].etag).digest('base64url').slice(0, 12)
  }

  private all(): Promise<Record<ConsoleAssetName, ConsoleAsset>> {
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined
      throw err
    })
    return this.loading
  }

  private async load(): Promise<Record<ConsoleAssetName, ConsoleAsset>> {
    const prebuilt = `${this.prebuiltDir.replace(/\/?$/, '/')}console.js`
    const js = existsSync(prebuilt) ? await readFile(prebuilt) : Buffer.from(await bundleConsole())
    return {
      'console.js': asset('text/javascript; charset=utf-8', js),
      'console.css': asset('text/css; charset=utf-8', Buffer.from(await consoleCss())),
    }
  }
}
