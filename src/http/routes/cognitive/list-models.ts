import type { App } from '../../types.js'
import { AnyObject, cognitiveSchema } from './common.js'

export default function listModels(app: App): void {
  app.get('/models', {
    config: { permission: 'runtime.read' },
    schema: cognitiveSchema('listModels', 'The configured language models, in the Model shape of @botpress/cognitive (CognitiveBeta.listModels)', {}, { 200: AnyObject }),
  }, async () => ({ models: app.services.llm.listModels() }))
}
