import { Type } from 'typebox'
import { StringMap } from '../../schemas/common.js'
import type { App } from '../../types.js'
import { filesSchema } from './common.js'
import { KbName, KnowledgeBaseSchema, kbView } from './knowledge-common.js'

const Body = Type.Object({ name: KbName, tags: Type.Optional(StringMap(Type.String())) }, { additionalProperties: false })
const { createdAt: _createdAt, ...created } = KnowledgeBaseSchema.properties

export default function createKnowledgeBase(app: App): void {
  app.post('/knowledge-bases', {
    config: { permission: 'files.write' },
    schema: filesSchema('createKnowledgeBase', 'Create a knowledge base: the bot\'s indexed files tagged kbId=<its id>, or carrying all of its tags',
      { body: Body }, { 200: Type.Object({ knowledgeBase: Type.Object({ ...created, createdAt: Type.Optional(Type.String()) }) }) }),
  }, async (request) => ({
    knowledgeBase: kbView(await app.services.files.knowledge.createKnowledgeBase(request.filesBot.id, request.body)),
  }))
}
