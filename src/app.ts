import { integrationWebhookRoutes } from './http/routes/integration-webhooks/index.js'
import { integrationRoutes } from './http/routes/integration/index.js'
import { createServer } from 'node:http'
import Fastify, { LogController, type FastifyServerOptions } from 'fastify'
import cors from '@fastify/cors'
import { WEBCHAT_API_PREFIX, webchatApiRoutes } from './http/routes/webchat-api/index.js'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { BlobStore } from './blobs/blob-store.js'
import type { Config } from './config.js'
import { createServices } from './compose.js'
import { adminRoutes } from './http/routes/admin/index.js'
import { filesRoutes } from './http/routes/files/index.js'
import { runtimeRoutes } from './http/routes/runtime/index.js'
import { cognitiveRoutes } from './http/routes/cognitive/index.js'
import { tablesRoutes } from './http/routes/tables/index.js'
import { parseQueryString } from './http/querystring.js'
import { frameworkErrorHandler, registerErrorHandling } from './http/plugins/error-handler.js'
import { registerJsonBody } from './http/plugins/json-body.js'
import { answerExpectation, clientErrorHandler, refuseTunnel, registerEarlyAnswers } from './http/plugins/connection.js'
import { registerMetrics } from './http/plugins/metrics.js'
import { registerWebhookOrigin } from './http/plugins/webhook-origin.js'
import { registerValidation } from './http/plugins/validation.js'
import { chatRoutes } from './http/routes/chat/index.js'
import { webchatRoutes } from './http/routes/webchat/index.js'
import { consoleRoutes } from './http/routes/console/index.js'
import { webhookRoutes } from './http/routes/webhook/index.js'
import healthRoutes from './http/routes/health.js'
import { operatorRoutes } from './http/routes/operator/index.js'
import type { App } from './http/types.js'
import type { PubSub } from './pubsub/pubsub.js'
import type { BotSandbox } from './runtime/sandbox.js'
import { errors } from './lib/errors.js'
import { requestId } from './lib/ids.js'
import { logDestination } from './lib/log-destination.js'
import { registerRequestLog } from './http/plugins/request-log.js'
import type { Store } from './store/store.js'

/** The adapters the app runs on (src/compose.ts createAdapters builds them from the Config). */
export interface AppDeps {
  config: Config
  store: Store
  pubsub: PubSub
  /** Where file content and webhook bodies live. */
  blobs: BlobStore
  /** Where bot code runs; a QuickJS worker pool unless given. Closed with the app when created here. */
  sandbox?: BotSandbox
  /** pino options, or false for silence (tests). */
  logger?: FastifyServerOptions['logger']
}

/** Headers browsers may send (wire-compat §3): the official clients' auth and stream headers. */
const CORS_HEADERS = [
  'x-user-key', 'content-type', 'authorization', 'x-bot-id', 'x-workspace-id', 'x-integration-id', 'x-integration-alias',
  'cache-control', 'last-event-id', 'idempotency-key',
  // @botpress/cognitive's CognitiveBeta (debug) and the ADK runtime (llm-wire.md §1.2).
  'x-debug', 'x-multiple-integrations',
  // Botpress's webchat (llm-wire.md §4): a backend's admin secret, the literal `timeout` header of its stream, the upload's tagging.
  'x-admin-secret', 'timeout', 'x-amz-tagging',
]

const bad = (s: unknown) => typeof s === 'string' && (s.includes('\u0000') || !s.isWellFormed())
const values = (v: unknown): unknown[] => (Array.isArray(v) ? v : v !== null && typeof v === 'object' ? Object.entries(v).flat().flatMap(values) : [v])

/** Builds the HTTP application; never listens (tests inject into it, main.ts listens). */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, store, pubsub } = deps
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, stream: logDestination() },
    genReqId: requestId,
    bodyLimit: config.chatBodyLimit,
    trustProxy: config.trustProxy,
    // Requests arriving while the server closes get 503 with the error body (plugins/connection.ts).
    return503OnClosing: false,
    // Fastify's two lines per request are off: the request log (plugins/request-log.ts) writes one, without secrets.
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: frameworkErrorHandler,
    // Errors of Node's HTTP parser and the timeouts below answer with the error body too.
    clientErrorHandler: clientErrorHandler(config),
    routerOptions: { maxParamLength: 4096, ignoreTrailingSlash: false, querystringParser: parseQueryString },
    // Slow-client protection (threats T7): bounded header and body time, frequent checks.
    // Node's own answers to a Host-less HTTP/1.1 request and to an unknown Expect have no body: both are
    // answered here instead, with the error body (the Host check is an onRequest hook below).
    serverFactory: (handler) =>
      createServer(
        { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1000, keepAliveTimeout: config.keepAliveTimeoutMs, requireHostHeader: false },
        handler,
      )
        .on('checkExpectation', answerExpectation)
        .on('connect', refuseTunnel)
        .on('upgrade', refuseTunnel),
  }).withTypeProvider<TypeBoxTypeProvider>()

  // The domain services, wired in the composition root (src/compose.ts).
  const domain = createServices({ config, store, pubsub, blobs: deps.blobs, sandbox: deps.sandbox, warn: (context, message) => app.log.warn(context, message), info: (context, message) => app.log.info(context, message) })
  const { services } = domain
  app.decorate('services', services)

  // Hooks below are synchronous (done callback): an async hook costs a promise per request.
  registerRequestLog(app, config.requestLog)
  registerErrorHandling(app)
  registerEarlyAnswers(app)
  registerJsonBody(app)
  registerValidation(app)
  // Path parameters, query values and x-* headers reach store lookups without the JSON body guard:
  // refuse NUL and lone surrogates here too, or PostgreSQL (which cannot hold them) would answer
  // 500 where SQLite answers 404 (threats T10: same input, same answer on both engines).
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw
    if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) {
      return done(errors.invalidPayload('An HTTP/1.1 request needs a Host header'))
    }
    const params = request.params as Record<string, unknown> | undefined
    for (const name in params) {
      if (bad(params[name])) return done(errors.invalidQuery(`Path parameter ${name} contains a NUL character or a lone surrogate`))
    }
    const query = request.query as Record<string, unknown> | undefined
    for (const name in query) {
      if (bad(name) || values(query[name]).some(bad)) return done(errors.invalidQuery(`Query parameter ${name.replaceAll('\u0000', '\\0')} contains a NUL character or a lone surrogate`))
    }
    const headers = request.headers
    for (const name in headers) {
      const value = headers[name]
      if (name.startsWith('x-') && (typeof value === 'string' ? bad(value) : values(value).some(bad))) {
        return done(errors.invalidQuery(`Header ${name} contains a NUL character or a lone surrogate`))
      }
    }
    done()
  })
  // Integration webhooks on their own origin, when configured (PARLEY_WEBHOOK_PUBLIC_URL).
  registerWebhookOrigin(app, config.webhookPublicUrl)
  // Bodyless POST/PUT/DELETE (curl, fetch without body) validate as `{}` rather than failing on `undefined`.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD') request.body = {}
    done()
  })

  await app.register(cors, {
    origin: true, // echo the caller's Origin: browsers send credentials (withCredentials) and refuse `*`
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_HEADERS,
    maxAge: 600,
    // An OPTIONS request that is not a preflight is answered like any other, not with a text/plain 400.
    strictPreflight: false,
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Parley', version: '0.1.0', description: 'Chat, Admin, Files and Runtime APIs, wire-compatible with Botpress' },
      components: {
        securitySchemes: {
          userKey: { type: 'apiKey', in: 'header', name: 'x-user-key' },
          bearer: { type: 'http', scheme: 'bearer' },
          workspaceId: { type: 'apiKey', in: 'header', name: 'x-workspace-id' },
          botId: { type: 'apiKey', in: 'header', name: 'x-bot-id' },
        },
      },
    },
  })

  registerMetrics(app, domain.metrics)
  healthRoutes(app)
  operatorRoutes(app)
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(adminRoutes, { prefix: '/v1/admin' })
  await app.register(filesRoutes, { prefix: '/v1/files' })
  await app.register(runtimeRoutes, { prefix: '/v1/chat' })
  await app.register(tablesRoutes, { prefix: '/v1/tables' })
  await app.register(cognitiveRoutes, { prefix: '/v2/cognitive' })
  await app.register(integrationRoutes, { prefix: '/v1/integration' })
  await app.register(webchatRoutes)
  await app.register(webchatApiRoutes, { prefix: `${WEBCHAT_API_PREFIX}/:clientId` })
  await app.register(consoleRoutes)
  await app.register(chatRoutes, { prefix: '/:webhookId' })
  await app.register(webhookRoutes, { service: domain.webhooks })
  await app.register(integrationWebhookRoutes)

  app.addHook('onReady', async () => domain.start())
  // Open streams would hold server.close() forever: end them first; let running turns finish.
  app.addHook('preClose', async () => domain.stop())
  app.addHook('onClose', async () => domain.close())
  return app
}
