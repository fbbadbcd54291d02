import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../../lib/errors.js'
import type { App } from '../../types.js'
import { WebchatAssets, type WebchatAsset, type WebchatAssetName } from '../../../webchat/assets.js'
import { WEBCHAT_CSP, notFoundPage, webchatPage } from '../../../webchat/page.js'
import { WEBCHAT_PREFIX } from '../../../webchat/urls.js'

/** Headers of every webchat response: no sniffing, no referrer, no powerful features. */
function hardened(reply: FastifyReply): FastifyReply {
  return reply
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=()')
}

function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: WebchatAsset, cacheControl: string): FastifyReply {
  hardened(reply)
    .header('content-type', asset.type)
    .header('etag', asset.etag)
    .header('cache-control', cacheControl)
    // embed.js runs on other sites, and the page may be framed there: let them load our files.
    .header('cross-origin-resource-policy', 'cross-origin')
  const match = request.headers['if-none-match']
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag)) return reply.code(304).send()
  return reply.send(asset.body)
}

/**
 * The webchat, under /webchat (a path no webhook id takes: they are UUIDs, and static segments win in the router):
 * - GET /webchat/{webhookId}        the page of one chat integration (404 page when unknown or disabled)
 * - GET /webchat/embed.js           the script that puts a launcher and that page in an iframe on any site
 * - GET /webchat/assets/{file}      the bundled app (webchat.js) and its stylesheet (webchat.css)
 * The page uses only the public Chat API at ../{webhookId} (relative, so it works behind a path prefix); embed.js
 * reads the bot's public settings there too (GET /{webhookId}/webchat, any origin).
 */
export async function webchatRoutes(app: App, options: { assets?: WebchatAssets } = {}): Promise<void> {
  const assets = options.assets ?? new WebchatAssets()
  const hide = { hide: true }

  app.get(`${WEBCHAT_PREFIX}/embed.js`, { schema: hide }, async (request, reply) =>
    sendAsset(request, reply, await assets.get('embed.js'), 'public, max-age=300, must-revalidate'))

  app.get(`${WEBCHAT_PREFIX}/assets/:file`, {
    schema: { ...hide, params: Type.Object({ file: Type.String() }), querystring: Type.Object({ v: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    const { file } = request.params
    if (file !== 'webchat.js' && file !== 'webchat.css') throw new ApiError('ResourceNotFound', `Webchat asset "${file}" not found`)
    const versioned = request.query.v !== undefined && request.query.v === (await assets.version())
    return sendAsset(request, reply, await assets.get(file as WebchatAssetName), versioned ? 'public, max-age=31536000, immutable' : 'no-cache')
  })

  app.get(`${WEBCHAT_PREFIX}/:webhookId`, {
    schema: { ...hide, params: Type.Object({ webhookId: Type.String() }) },
  }, async (request, reply) => {
    hardened(reply).header('content-security-policy', WEBCHAT_CSP).header('cache-control', 'no-store').type('text/html; charset=utf-8')
    let config
    try {
      config = await app.services.chat.webchatConfig(request.params.webhookId)
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return reply.code(404).send(notFoundPage())
      throw err
    }
    return reply.send(webchatPage({ webhookId: request.params.webhookId, assetVersion: await assets.version(), config }))
  })
}
