import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors, fromConstraintError, isUnavailableError, type ErrorBody } from '../../lib/errors.js'
import { payloadTypeProblem } from '../schemas/chat.js'

/** An unknown message `type` (ajv: `must be in oneOf` of a discriminator) says which types there are. */
function payloadTypeMessage(err: FastifyError): string | undefined {
  const e = err.validation?.find((v) => v.keyword === 'discriminator')
  return e && payloadTypeProblem(e, `${err.validationContext ?? 'body'}${e.instancePath}`)
}

/** Fastify's own error codes → our registry, so that framework errors keep the wire shape too. */
export function fromFastifyError(err: FastifyError): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PayloadTooLarge', 'Request body is larger than this API accepts')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UnsupportedMediaType', 'Unsupported Content-Type; send application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('InvalidPayload', err.message)
    case 'FST_ERR_BAD_URL':
      return new ApiError('InvalidPayload', 'The request URL is not valid')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('ResourceNotFound', 'No resource has an id that long')
  }
  if (err.validation) {
    return new ApiError(err.validationContext === 'querystring' ? 'InvalidQuery' : 'InvalidPayload', payloadTypeMessage(err) ?? err.message)
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError('InvalidPayload', err.message)
  }
  return undefined
}

export function errorBody(request: FastifyRequest, err: ApiError): ErrorBody {
  return {
    id: String(request.id),
    code: err.status,
    type: err.type,
    message: err.message,
    ...(err.metadata && { metadata: err.metadata }),
  }
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds))
  return reply.code(err.status).type('application/json; charset=utf-8').send(errorBody(request, err))
}

/** Patterns of registered routes, to tell "wrong method" (405) from "no such path" (404). */
function routeMatcher(app: FastifyInstance) {
  const routes: { method: string; pattern: RegExp }[] = []
  app.addHook('onRoute', (route) => {
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')
    for (const method of [route.method].flat()) routes.push({ method, pattern: new RegExp(`^${source}$`) })
  })
  return (method: string, path: string) => routes.some((r) => r.method !== method && r.method !== 'OPTIONS' && r.pattern.test(path))
}

/** For Fastify's `frameworkErrors` option: router errors (bad URL encoding, overlong ids) skip setErrorHandler. */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendError(request, reply, fromFastifyError(err) ?? new ApiError('InvalidPayload', 'The request is not valid'))
}

export function registerErrorHandling(app: FastifyInstance): void {
  const existsWithOtherMethod = routeMatcher(app)

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiError = err instanceof ApiError ? err : fromFastifyError(err) ?? fromConstraintError(err)
    if (apiError) {
      if (apiError.status >= 500) request.log.error({ err }, 'request failed')
      return sendError(request, reply, apiError)
    }
    if (isUnavailableError(err)) {
      request.log.warn({ err: { message: err.message, code: err.code } }, 'database unavailable')
      return sendError(request, reply.header('retry-after', '2'), errors.unavailable())
    }
    // Unexpected: log everything, reveal nothing but the id.
    request.log.error({ err }, 'unhandled error')
    return sendError(request, reply, errors.internal())
  })

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/'
    if (existsWithOtherMethod(request.method, path)) return sendError(request, reply, errors.methodNotFound(request.method, path))
    return sendError(request, reply, errors.notFound('Route', `${request.method} ${path}`))
  }
  app.setNotFoundHandler(notFound)
  // Routing comes before the body: an unknown route is 404 (or 405) whatever its body, never a
  // body error (malformed JSON, media type, size). preParsing runs after the onRequest hooks (CORS).
  app.addHook('preParsing', (request, reply, _payload, done) => {
    if (request.is404) {
      void notFound(request, reply)
      return
    }
    done()
  })
}
