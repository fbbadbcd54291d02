import { Type } from 'typebox'
import type { App } from '../../types.js'
import { JobOut, TableParams, jobView, tablesSchema } from './common.js'

export default function exportTable(app: App): void {
  app.get('/:table/export', {
    config: { permission: 'tables.read' },
    schema: tablesSchema('exportTable', 'Export the rows to a file of the Files API (outputFileId of the completed job) as a job', {
      params: TableParams,
      querystring: Type.Object({ format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('json')])), compress: Type.Optional(Type.Boolean()) }),
    }, { 200: Type.Object({ job: JobOut }) }),
  }, async (request) => ({ job: jobView(await app.services.tables.queueExport(request.tablesBot.id, request.params.table, request.query.format ?? 'json', request.query.compress ?? false)) }))
}
