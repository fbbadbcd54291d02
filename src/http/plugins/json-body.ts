import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../lib/errors.js'
import { findJsonProblem } from '../../lib/json-guard.js'

/**
 * The only body parser: JSON, guarded. Other media types get 415 from Fastify because no parser
 * matches them. An empty body parses as undefined (the official clients send `{}` on DELETE, but
 * other callers send nothing).
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const bytes = body as Buffer
    if (bytes.length === 0) return done(null, undefined)
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return done(new ApiError('InvalidPayload', 'The request body is not valid UTF-8'), undefined)
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      return done(new ApiError('InvalidPayload', `Malformed JSON body: ${(err as Error).message}`), undefined)
    }
    const problem = findJsonProblem(value)
    if (problem) return done(new ApiError('InvalidPayload', `Invalid JSON body: ${problem}`), undefined)
    done(null, value)
  })
}
