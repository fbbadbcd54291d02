import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Type } from 'typebox'
import type { FastifyReply } from 'fastify'
import { ApiError } from '../../../lib/errors.js'
import { byteRange } from '../../byte-range.js'
import { serveUntrusted } from '../../untrusted-content.js'
import type { App } from '../../types.js'

const require = createRequire(import.meta.url)
/** Parley's version (package.json, next to src/ and dist/). */
const VERSION = (JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }).version
/** swagger-ui-dist's own files, served from the installed package (no outside host). */
const SWAGGER_DIR = dirname(require.resolve('swagger-ui-dist/package.json'))
const SWAGGER_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
}
/** The demo bot's files (assets/demo/ at the package root, next to src/ and dist/), by name: only these are served. */
const DEMO_DIR = new URL('../../../../assets/demo/', import.meta.url)
const DEMO_FILES: Record<string, string> = {
  'parley.svg': 'image/svg+xml',
  'sample.wav': 'audio/wav',
  'sample.pdf': 'application/pdf',
  // Made by scripts/make-demo-video.mjs (Chromium's MediaRecorder: there is no video encoder to depend on).
  'sample.webm': 'video/webm',
}
/**
 * Starts Swagger UI on /openapi.json (a file, not inline, so the page's CSP allows no inline script). Tags start
 * collapsed: with every tag expanded, Swagger UI 5.35 stopped rendering after the ninth of ~200 operations (no error
 * shown), and a reader looks for one API anyway.
 */
const DOCS_INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: false, validatorUrl: null, docExpansion: 'none' })
}
`
/** Swagger UI's colours, darkened to meet WCAG AA contrast (its defaults fail axe-core's color-contrast rule). */
const DOCS_CSS = `.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1558b0 }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #17663e }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #8a4b00 }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b3261e }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #00695c }
.swagger-ui .opblock.opblock-head .opblock-summary-method, .swagger-ui .opblock.opblock-options .opblock-summary-method { background: #5b2a86 }
.swagger-ui .info .title small { background: #4a5160 }
.swagger-ui .info .title small.version-stamp { background: #2f6300 }
.swagger-ui .info a, .swagger-ui .info .url, .swagger-ui a.nostyle, .swagger-ui .info .base-url { color: #0b57d0 }
.swagger-ui .opblock .opblock-summary-description, .swagger-ui .opblock-tag small, .swagger-ui .opblock .opblock-summary-path__deprecated { color: #2b2b2b }
.swagger-ui .opblock-tag { color: #1a1a1a }
.swagger-ui .btn.authorize { color: #17663e; border-color: #17663e }
.swagger-ui .btn.authorize svg { fill: #17663e }
.swagger-ui .model-title, .swagger-ui .model, .swagger-ui section.models h4 { color: #1a1a1a }
.swagger-ui .prop-type { color: #4a2a86 }
.swagger-ui .parameter__in, .swagger-ui .prop-format, .swagger-ui .model .property.primitive { color: #4a4a4a }
`
const HOME_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
// Swagger UI sets style attributes and uses data: images; it fetches only /openapi.json and what "Try it out" calls here.
const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

function hardened(reply: FastifyReply, csp?: string): FastifyReply {
  reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer')
  if (csp) reply.header('content-security-policy', csp)
  return reply
}

const homePage = () => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley ${VERSION}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; background: #fff; }
  h1 { font-size: 1.6rem; margin-bottom: .25rem; }
  p.version { color: #4a4a4a; margin-top: 0; }
  a { color: #0b57d0; }
  li { margin: .35rem 0; }
  code { background: #f1f3f4; padding: .1rem .3rem; border-radius: 3px; }
</style>
</head>
<body>
<main>
<h1>Parley</h1>
<p class="version">Version ${VERSION} — a self-hosted bot platform that speaks the Botpress Cloud wire format.</p>
<h2>For people</h2>
<ul>
  <li><a href="docs">API reference</a> (Chat, Admin, Files and Runtime APIs)</li>
  <li>Webchat: <code>webchat/&lt;webhookId&gt;</code> on this server. The demo bot's address is printed at start-up and
    stored as <code>chat.webchatUrl</code> in <code>credentials.json</code>; <code>parley bots list</code> shows every bot's.</li>
</ul>
<h2>For machines</h2>
<ul>
  <li><a href="openapi.json">OpenAPI description</a> (<code>/openapi.json</code>)</li>
  <li><a href="healthz">Liveness</a> (<code>/healthz</code>) and <a href="readyz">readiness</a> (<code>/readyz</code>)</li>
  <li><a href="metrics">Metrics</a> (<code>/metrics</code>, Prometheus text format)</li>
</ul>
</main>
</body>
</html>
`

const docsPage = () => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley ${VERSION} — API reference</title>
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="stylesheet" href="docs/assets/parley-docs.css">
</head>
<body>
<main id="swagger-ui" aria-label="API reference"></main>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/init.js"></script>
</body>
</html>
`

/**
 * Pages for the people running the instance (not in /openapi.json):
 * - GET /                    what this server is: version, the API reference, the webchat, health and metrics
 * - GET /docs                the API reference: Swagger UI on /openapi.json, its files served from swagger-ui-dist
 * - GET /docs/assets/{file}  those files (and the small script that starts it)
 * - GET /demo/assets/{file}  the demo bot's image, audio, video and PDF (assets/demo/, shipped with the server: no
 *                            outside host), with single byte ranges for the media
 */
export function operatorRoutes(app: App): void {
  const hide = { hide: true }
  app.get('/', { schema: hide }, async (_request, reply) =>
    hardened(reply, HOME_CSP).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(homePage()))

  // Relative links (docs/assets/…) resolve from /docs: the page works behind a path prefix too.
  app.get('/docs', { schema: hide }, async (_request, reply) =>
    hardened(reply, DOCS_CSP).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(docsPage()))

  app.get('/docs/assets/:file', { schema: { ...hide, params: Type.Object({ file: Type.String() }) } }, async (request, reply) => {
    const { file } = request.params
    hardened(reply).header('cache-control', 'public, max-age=3600')
    if (file === 'init.js') return reply.type('text/javascript; charset=utf-8').send(DOCS_INIT)
    if (file === 'parley-docs.css') return reply.type('text/css; charset=utf-8').send(DOCS_CSS)
    const type = SWAGGER_FILES[file]
    if (!type) throw new ApiError('ResourceNotFound', `API reference file "${file}" not found`)
    return reply.type(type).send(readFileSync(join(SWAGGER_DIR, file)))
  })

  app.get('/demo/assets/:file', { schema: { ...hide, params: Type.Object({ file: Type.String() }) } }, async (request, reply) => {
    const { file } = request.params
    const type = DEMO_FILES[file]
    if (!type) throw new ApiError('ResourceNotFound', `Demo file "${file}" not found`)
    // Served like any untrusted bytes (the SVG is an image: no script of it may run even when opened on its own).
    serveUntrusted(reply, { contentType: type, embeddable: true }).header('cache-control', 'public, max-age=3600')
      .header('access-control-allow-origin', '*').header('accept-ranges', 'bytes')
    const body = readFileSync(new URL(file, DEMO_DIR))
    // Media elements ask for ranges (to seek, and to read a file's index at its end).
    const range = byteRange(request.headers.range, body.length)
    if (!range) return reply.send(body)
    return reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${body.length}`).send(body.subarray(range.start, range.end + 1))
  })
}
