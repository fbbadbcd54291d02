import { Type } from 'typebox'
import { StringMap } from '../../schemas/common.js'
import type { App } from '../../types.js'
import { filesSchema } from './common.js'
import { KbIdParams, KbName, KnowledgeBaseSchema, kbView } from './knowledge-common.js'

const Body = Type.Object({
  name: KbName,
  tags: Type.Optional(StringMap(Type.Union([Type.String(), Type.Null()]), { description: 'Merged into the tags; null removes a tag' })),
}, { additionalProperties: false })

export default function updateKnowledgeBase(app: App): void {
  app.put('/knowledge-bases/:id', {
    config: { permission: 'files.write' },
    schema: filesSchema('updateKnowledgeBase', 'Rename a knowledge base and merge its tags', { params: KbIdParams, body: Body },
      { 200: Type.Object({ knowledgeBase: KnowledgeBaseSchema }) }),
  }, async (request) => ({
    knowledgeBase: kbView(await app.services.files.knowledge.updateKnowledgeBase(request.filesBot.id, request.params.id, request.body)),
  }))
}
