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
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: unknown, body: Buffer | string) => {
    const bytes = body as Buffer
    if (bytes.length === 0) return undefined
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      throw new ApiError('InvalidPayload', 'The request body is not valid UTF-8')
    }
    let parsed: { value: unknown; problem: string | undefined }
    try {
      // A large body (a Tables write of up to 40 MB) is parsed in slices that yield to the event loop.
      parsed = bytes.length > WRITE_SLICE_BYTES ? await parseJsonInSlices(text) : { value: JSON.parse(text), problem: undefined }
    } catch (err) {
      throw new ApiError('InvalidPayload', `Malformed JSON body: ${(err as Error).message}`)
    }
    const problem = parsed.problem ?? (bytes.length > WRITE_SLICE_BYTES ? undefined : findJsonProblem(parsed.value))
    if (problem) throw new ApiError('InvalidPayload', `Invalid JSON body: ${problem}`)
    return parsed.value
  })
}
