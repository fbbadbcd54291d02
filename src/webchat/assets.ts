import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { WEBCHAT_CSS } from './styles.js'
import { WEBCHAT_UI_CSS } from './styles-ui.js'

/** A file the webchat routes serve: body, content type and a strong ETag. */
export interface WebchatAsset {
  body: Buffer
  type: string
  etag: string
}

export type WebchatAssetName = 'webchat.js' | 'embed.js' | 'webchat.css'

const TYPES: Record<WebchatAssetName, string> = {
  'webchat.js': 'text/javascript; charset=utf-8',
  'embed.js': 'text/javascript; charset=utf-8',
  'webchat.css': 'text/css; charset=utf-8',
}

/** Where `npm run build` puts the bundles: dist/webchat/assets (next to this module once compiled). */
export const PREBUILT_DIR = fileURLToPath(new URL('./assets/', import.meta.url))

/** The browser entry points, as TypeScript sources (src/) or tsc output (dist/). */
function entry(name: 'main' | 'embed'): string {
  for (const ext of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`./client/${name}${ext}`, import.meta.url))
    if (existsSync(path)) return path
  }
  throw new Error(`webchat: the browser source client/${name}.ts is missing next to ${fileURLToPath(import.meta.url)}`)
}

/**
 * Bundles the two browser scripts with esbuild: the page app (an ES module) and embed.js (a classic script).
 * No CDN, no external import: everything the browser runs is in these two files.
 */
export async function bundleWebchat(options: { minify?: boolean } = {}): Promise<Record<'webchat.js' | 'embed.js', string>> {
  const esbuild = await import('esbuild')
  const common = {
    bundle: true,
    write: false,
    platform: 'browser' as const,
    target: ['es2020'],
    minify: options.minify ?? true,
    legalComments: 'none' as const,
    charset: 'utf8' as const,
    logLevel: 'silent' as const,
  }
  const [app, embed] = await Promise.all([
    esbuild.build({ ...common, entryPoints: [entry('main')], format: 'esm' }),
    esbuild.build({ ...common, entryPoints: [entry('embed')], format: 'iife' }),
  ])
  const text = (result: { outputFiles?: Array<{ text: string }> }) => {
    const file = result.outputFiles?.[0]
    if (!file) throw new Error('webchat: esbuild produced no output')
    return file.text
  }
  return { 'webchat.js': text(app), 'embed.js': text(embed) }
}

const asset = (name: WebchatAssetName, body: Buffer): WebchatAsset => ({
  body,
  type: TYPES[name],
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
})

/**
 * The served assets: the prebuilt bundles when `npm run build` made them, else bundled once in memory from the
 * sources (running from src/ with tsx or vitest, or after a plain tsc).
 */
export class WebchatAssets {
  private loading: Promise<Record<WebchatAssetName, WebchatAsset>> | undefined

  constructor(private readonly prebuiltDir: string = PREBUILT_DIR) {}

  get(name: WebchatAssetName): Promise<WebchatAsset> {
    return this.all().then((all) => all[name])
  }

  /** A short fingerprint of the bundles, used to bust caches in the page's asset URLs. */
  async version(): Promise<string> {
    const all = await this.all()
    return createHash('sha256').update(all['webchat.js'].etag).update(all['webchat.css'].etag).digest('base64url').slice(0, 12)
  }

  private all(): Promise<Record<WebchatAssetName, WebchatAsset>> {
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined // let the next request try again
      throw err
    })
    return this.loading
  }

  private async load(): Promise<Record<WebchatAssetName, WebchatAsset>> {
    const css = asset('webchat.css', Buffer.from(WEBCHAT_CSS + WEBCHAT_UI_CSS))
    const prebuilt = (name: string) => `${this.prebuiltDir.replace(/\/?$/, '/')}${name}`
    if (existsSync(prebuilt('webchat.js')) && existsSync(prebuilt('embed.js'))) {
      const [app, embed] = await Promise.all([readFile(prebuilt('webchat.js')), readFile(prebuilt('embed.js'))])
      return { 'webchat.js': asset('webchat.js', app), 'embed.js': asset('embed.js', embed), 'webchat.css': css }
    }
    const bundles = await bundleWebchat()
    return {
      'webchat.js': asset('webchat.js', Buffer.from(bundles['webchat.js'])),
      'embed.js': asset('embed.js', Buffer.from(bundles['embed.js'])),
      'webchat.css': css,
    }
  }
}
