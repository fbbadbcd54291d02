import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../lib/errors.js'
import { findJsonProblem } from '../../lib/json-guard.js'
import { parseJsonInSlices } from '../../lib/sliced-json.js'
import { WRITE_SLICE_BYTES } from '../../lib/slices.js'

/**
 * The only body parser: JSON, guarded. Other media types get 415 from Fastify because no parser
 * matches them. An empty body parses as undefined (the official clients send `{}` on DELETE, but
 * other callers send nothing).
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  // Callback style: a small body (nearly all) is parsed at once, with no promise on the hot path; a large one (a Tables
  // write of up to 40 MB) in slices that yield to the event loop.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const bytes = body as Buffer
    if (bytes.length === 0) return done(null, undefined)
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return done(new ApiError('InvalidPayload', 'The request body is not valid UTF-8'), undefined)
    }
    const malformed = (err: unknown) => new ApiError('InvalidPayload', `Malformed JSON body: ${(err as Error).message}`)
    const checked = (value: unknown, problem: string | undefined) =>
      problem ? done(new ApiError('InvalidPayload', `Invalid JSON body: ${problem}`), undefined) : done(null, value)
    if (bytes.length > WRITE_SLICE_BYTES) {
      parseJsonInSlices(text).then(({ value, problem }) => checked(value, problem), (err: unknown) => done(malformed(err), undefined))
      return
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      return done(malformed(err), undefined)
    }
    checked(value, findJsonProblem(value))
  })
}
