import { Type } from 'typebox'
import type { App } from '../../types.js'
import { fileView } from '../../../domain/file-views.js'
import { FILES_PAGE_SIZE, MAX_LIST_IDS } from '../../../domain/file-service.js'
import { ListMeta, listMeta, StringMap } from '../../schemas/common.js'
import { FileSchema, filesSchema } from './common.js'

const Query = Type.Object({
  nextToken: Type.Optional(Type.String({ maxLength: 512, description: 'Token from the previous page\'s meta.nextToken' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: FILES_PAGE_SIZE.max, default: FILES_PAGE_SIZE.default })),
  sortField: Type.Optional(Type.Union([
    Type.Literal('key'), Type.Literal('size'), Type.Literal('createdAt'), Type.Literal('updatedAt'), Type.Literal('status'),
  ], { description: 'Default createdAt' })),
  sortDirection: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Default: asc for key and status, desc otherwise' })),
  tags: Type.Optional(StringMap(Type.String(), { description: 'Dot notation: tags.category=docs; every tag must match' })),
  ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: MAX_LIST_IDS })),
  indexed: Type.Optional(Type.Boolean()),
})

export default function listFiles(app: App): void {
  app.get('', {
    config: { permission: 'files.read' },
    schema: filesSchema('listFiles', 'List the bot\'s files with keyset paging (expired files are left out)', { querystring: Query },
      { 200: Type.Object({ files: Type.Array(FileSchema), meta: ListMeta }) }),
  }, async (request) => {
    const page = await app.services.files.listFiles(request.filesBot.id, request.query)
    return { files: page.items.map(fileView), meta: listMeta(page) }
  })
}
