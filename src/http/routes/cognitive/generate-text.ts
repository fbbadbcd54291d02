import type { App } from '../../types.js'
import { cognitiveResponse, generateInput } from '../../../domain/llm/cognitive-v2.js'
import { AnyObject, caller, callerGone, CognitiveRequestBody, cognitiveSchema } from './common.js'

export default function generateText(app: App): void {
  app.post('/generate-text', {
    config: { permission: 'runtime.write' },
    schema: cognitiveSchema('generateText', 'One answer of a configured language model (CognitiveBeta.generateText)', { body: CognitiveRequestBody }, { 200: AnyObject }),
  }, async (request, reply) => {
    const result = await app.services.llm.generate(caller(request), generateInput(request.body, callerGone(reply)), 'cognitive-v2')
    return cognitiveResponse(result)
  })
}
