import { Type } from 'typebox'
import type { App } from '../../types.js'
import { MAX_PAGE_NUMBER, MAX_PASSAGE_CHARS, MAX_SET_PASSAGES, PASSAGE_TYPES } from '../../../domain/knowledge/knowledge-service.js'
import { EmptyObject } from '../../schemas/common.js'
import { FileIdParams, filesSchema } from './common.js'

const Passage = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: MAX_PASSAGE_CHARS, description: 'Markdown' }),
    type: Type.Optional(Type.Union(PASSAGE_TYPES.map((t) => Type.Literal(t)), { description: 'A title or subtitle heads the passages after it' })),
    pageNumber: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PAGE_NUMBER })),
  },
  { additionalProperties: false },
)

const Body = Type.Object(
  { passages: Type.Array(Passage, { maxItems: MAX_SET_PASSAGES, description: 'In the order of the original document' }) },
  { additionalProperties: false },
)

export default function setFilePassages(app: App): void {
  app.put('/:id/passages', {
    config: { permission: 'files.write' },
    schema: filesSchema('setFilePassages', 'Replace the passages an uploaded file is searched by; the file becomes indexing_completed',
      { params: FileIdParams, body: Body }, { 200: EmptyObject }),
  }, async (request) => {
    await app.services.files.setFilePassages(request.filesBot.id, request.params.id, request.body.passages)
    return {}
  })
}
