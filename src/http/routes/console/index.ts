import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors } from '../../../lib/errors.js'
import type { App } from '../../types.js'
import { ConsoleAssets, type ConsoleAsset, type ConsoleAssetName } from '../../../console/assets.js'
import { CONSOLE_CSP, consolePage } from '../../../console/page.js'
import { CONSOLE_PREFIX } from '../../../console/urls.js'
import { CONSOLE_COOKIE, CONSOLE_CSRF_HEADER, readCookie } from '../../../domain/console-service.js'

function hardened(reply: FastifyReply): FastifyReply {
  return reply
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=()')
}

/** Session routes need the console's header: a cross-site form cannot send it (no login CSRF, no forced sign-out). */
function requireConsoleHeader(request: FastifyRequest): void {
  if (request.headers[CONSOLE_CSRF_HEADER] !== '1') throw errors.forbidden(`Console requests must carry the "${CONSOLE_CSRF_HEADER}: 1" header`)
}

function sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : ''
  return `${CONSOLE_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`
}

const accountView = (a: { id: string; email: string; displayName: string }) => ({ id: a.id, email: a.email, displayName: a.displayName })

/**
 * The console, under /console (not in /openapi.json: a page and its session, not an API):
 * - GET  /console/                the page (the app renders the rest; its API calls go to /v1/admin with the cookie and header)
 * - GET  /console/assets/{file}   console.js (the app and uPlot, bundled) and console.css
 * - POST /console/session         sign in: {"token": "pat_…"} or {"link": "csl_…"} → the HttpOnly session cookie
 * - GET  /console/session         who is signed in (401 without a live session)
 * - DELETE /console/session       sign out (the session is deleted server-side)
 */
export async function consoleRoutes(app: App, options: { assets?: ConsoleAssets } = {}): Promise<void> {
  const assets = options.assets ?? new ConsoleAssets()
  const hide = { hide: true }

  app.get(CONSOLE_PREFIX, { schema: hide }, async (_request, reply) => hardened(reply).redirect(`${CONSOLE_PREFIX}/`, 302))

  app.get(`${CONSOLE_PREFIX}/`, { schema: hide }, async (_request, reply) => hardened(reply)
    .header('content-security-policy', CONSOLE_CSP).header('cache-control', 'no-store').type('text/html; charset=utf-8')
    .send(consolePage(await assets.version())))

  app.get(`${CONSOLE_PREFIX}/assets/:file`, {
    schema: { ...hide, params: Type.Object({ file: Type.String() }), querystring: Type.Object({ v: Type.Optional(Type.String()) }) },
  }, async (request, reply) => {
    const { file } = request.params
    if (file !== 'console.js' && file !== 'console.css') throw new ApiError('ResourceNotFound', `Console asset "${file}" not found`)
    const asset: ConsoleAsset = await assets.get(file as ConsoleAssetName)
    const versioned = request.query.v !== undefined && request.query.v === (await assets.version())
    hardened(reply).header('content-type', asset.type).header('etag', asset.etag)
      .header('cache-control', versioned ? 'public, max-age=31536000, immutable' : 'no-cache')
    const match = request.headers['if-none-match']
    if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag)) return reply.code(304).send()
    return reply.send(asset.body)
  })

  app.post(`${CONSOLE_PREFIX}/session`, {
    bodyLimit: 4096,
    schema: { ...hide, body: Type.Object({ token: Type.Optional(Type.String({ maxLength: 512 })), link: Type.Optional(Type.String({ maxLength: 512 })) }, { additionalProperties: false }) },
  }, async (request, reply) => {
    requireConsoleHeader(request)
    const { token, link } = request.body
    if ((token === undefined) === (link === undefined)) throw errors.invalidPayload('Give either "token" (a personal access token) or "link" (a sign-in link\'s secret)')
    const session = token !== undefined ? await app.services.console.signInWithToken(token) : await app.services.console.redeemSignInLink(link)
    const account = await app.services.console.sessionAccount(session.sessionId)
    hardened(reply).header('cache-control', 'no-store')
      .header('set-cookie', sessionCookie(request, session.sessionId, Math.floor((session.expiresAt - Date.now()) / 1000)))
    return { account: account && accountView(account), expiresAt: new Date(session.expiresAt).toISOString() }
  })

  app.get(`${CONSOLE_PREFIX}/session`, { schema: hide }, async (request, reply) => {
    requireConsoleHeader(request)
    const account = await app.services.console.sessionAccount(readCookie(request.headers.cookie, CONSOLE_COOKIE))
    if (!account) throw errors.unauthorized('No console session, or it expired: sign in again')
    hardened(reply).header('cache-control', 'no-store')
    return { account: accountView(account) }
  })

  app.delete(`${CONSOLE_PREFIX}/session`, { schema: hide }, async (request, reply) => {
    requireConsoleHeader(request)
    await app.services.console.signOut(readCookie(request.headers.cookie, CONSOLE_COOKIE))
    return hardened(reply).header('set-cookie', sessionCookie(request, '', 0)).code(204).send()
  })
}
