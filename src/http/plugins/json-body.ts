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
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string
    if (text.length === 0) return done(null, undefined)
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
