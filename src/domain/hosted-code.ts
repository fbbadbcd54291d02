import { hashSecret } from '../lib/crypto.js'
import { randomSecret, uuidv7 } from '../lib/ids.js'
import type { HostedKind } from '../store/package-store.js'
import type { Store } from '../store/store.js'

/**
 * Hosted code (issue #26 item 2): a bot or an integration version deployed with its CommonJS bundle (`bp deploy`'s
 * `updateBot({ code })`, `updateIntegration({ code })`) is run by Parley (src/runtime/hosted/), not served by its
 * user. Deploying keeps the bundle with a new version and points the bot's or definition's `url` at
 * `parley-hosted://<kind>/<id>/<version>`: every delivery path that posts to a url (events, register, actions,
 * webhooks, an integration's messages) posts to the process running that version, started on demand. A url given
 * with the deploy (`bp dev`'s) wins over the bundle; deploying Parley module code (bots) drops the bundle.
 */
const SCHEME = 'parley-hosted:'

const MODULE_EXPORTS = /\bmodule\.exports\s*=/
const ES_EXPORT = /^\s*export\s+(?:default\b|const\b|let\b|var\b|function\b|async\b|class\b|\{|\*)/m

/** Code that assigns `module.exports` and has no ES `export` statement: a CommonJS bundle (what `bp build` makes). */
export const isBundle = (code: string): boolean => MODULE_EXPORTS.test(code) && !ES_EXPORT.test(code)

export interface HostedRef { kind: HostedKind; ownerId: string; version: string }

export const hostedUrl = (ref: HostedRef): string => `${SCHEME}//${ref.kind}/${ref.ownerId}/${ref.version}`

export const isHostedUrl = (url: string | null | undefined): url is string => url?.startsWith(SCHEME) === true

export function parseHostedUrl(url: string): HostedRef | undefined {
  const match = /^parley-hosted:\/\/(bot|integration)\/([^/]+)\/([^/]+)$/.exec(url)
  return match ? { kind: match[1] as HostedKind, ownerId: match[2]!, version: match[3]! } : undefined
}

/** A url as log lines name it: a hosted one is "its hosted code" (its address says nothing to the reader). */
export const urlName = (url: string | null): string => (isHostedUrl(url) ? 'its hosted code' : String(url))

/** A url as the Admin API shows it: a hosted one is Parley's own business (Botpress shows no url for deployed code). */
export const shownUrl = (url: string | null): string | null => (isHostedUrl(url) ? null : url)

const NOTE = 'hosted code (bp deploy): the API key its process calls Parley with'

/** Keeps and drops deployed bundles, with the API key their processes use. */
export class HostedDeploys {
  constructor(private readonly store: Store, private readonly clock: () => number = Date.now) {}

  /**
   * Keeps `code` as the owner's bundle under a new version and answers the url to set. The API key is made at the
   * first deploy and kept by the next ones (a process of the previous version may still be finishing its work).
   */
  async deploy(kind: HostedKind, ownerId: string, code: string): Promise<string> {
    const now = this.clock()
    const current = await this.store.packages.getBundle(kind, ownerId)
    let token = current?.token ?? ''
    let keyId = current?.keyId ?? ''
    if (!token || !keyId) {
      token = randomSecret(kind === 'bot' ? 'bak' : 'iak')
      keyId = uuidv7()
      const row = { id: keyId, note: NOTE, createdAt: now, tokenHash: hashSecret(token) }
      if (kind === 'bot') await this.store.createBotApiKey({ ...row, botId: ownerId })
      else await this.store.integrations.createApiKey({ ...row, definitionId: ownerId })
    }
    const version = uuidv7()
    await this.store.packages.setBundle({ kind, ownerId, code, version, token, keyId, deployedAt: now })
    return hostedUrl({ kind, ownerId, version })
  }

  /** Drops the owner's bundle and its key (nothing to run any more). */
  async remove(kind: HostedKind, ownerId: string): Promise<void> {
    const current = await this.store.packages.getBundle(kind, ownerId)
    if (!current) return
    if (current.keyId) {
      if (kind === 'bot') await this.store.deleteBotApiKey(ownerId, current.keyId)
      else await this.store.integrations.deleteApiKey(ownerId, current.keyId)
    }
    await this.store.packages.deleteBundle(kind, ownerId)
  }
}
