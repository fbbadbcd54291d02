import type { App } from '../../types.js'
import { EmptyBody, EmptyObject } from '../../schemas/common.js'
import { filesSchema } from './common.js'
import { KbIdParams } from './knowledge-common.js'

export default function deleteKnowledgeBase(app: App): void {
  app.delete('/knowledge-bases/:id', {
    config: { permission: 'files.write' },
    schema: filesSchema('deleteKnowledgeBase', 'Delete a knowledge base (its files stay)', { params: KbIdParams, body: EmptyBody }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.files.knowledge.deleteKnowledgeBase(request.filesBot.id, request.params.id)
    return {}
  })
}
