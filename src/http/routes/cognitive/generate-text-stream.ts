import { PassThrough } from 'node:stream'
import type { App } from '../../types.js'
import { UNTRUSTED_CSP } from '../../untrusted-content.js'
import { finalStreamChunk, generateInput } from '../../../domain/llm/cognitive-v2.js'
import { caller, callerGone, CognitiveRequestBody, cognitiveSchema } from './common.js'

/**
 * NDJSON (`application/x-ndjson`): `{output, created}` per piece of text, then `{finished: true, toolCalls, metadata}`.
 * The 200 goes out with the first piece: a failure before it is an ordinary error answer; after it the connection is
 * cut without the final line, which the client reports as an error.
 */
export default function generateTextStream(app: App): void {
  app.post('/generate-text-stream', {
    config: { permission: 'runtime.write' },
    schema: cognitiveSchema('generateTextStream', 'A configured language model\'s answer as it is generated, as NDJSON (CognitiveBeta.generateTextStream)', { body: CognitiveRequestBody }, {}),
  }, async (request, reply) => {
    let stream: PassThrough | undefined
    const out = () => {
      if (!stream) {
        stream = new PassThrough()
        // Model output is text a user can steer: never active content on Parley's origin (src/http/untrusted-content.ts).
        void reply.type('application/x-ndjson').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
          .header('content-security-policy', UNTRUSTED_CSP).send(stream as never)
      }
      return stream
    }
    const line = (chunk: unknown) => `${JSON.stringify(chunk)}\n`
    try {
      const result = await app.services.llm.generate(caller(request), generateInput(request.body, callerGone(reply)), 'cognitive-v2', (output) => {
        out().write(line({ output, created: Date.now() }))
      })
      out().end(line(finalStreamChunk(result)))
    } catch (err) {
      if (!stream) throw err
      stream.destroy(err as Error)
    }
    return reply
  })
}
