import { Type } from 'typebox'
import type { App } from '../../types.js'
import { JobOut, TableParams, jobView, tablesSchema } from './common.js'

export default function importTable(app: App): void {
  app.post('/:table/import', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('importTable', 'Import rows from a file of the Files API (CSV with a header line, or a JSON array / JSON lines) as a job', {
      params: TableParams, body: Type.Object({ fileId: Type.String({ minLength: 1, maxLength: 500 }) }),
    }, { 200: Type.Object({ job: JobOut }) }),
  }, async (request) => ({ job: jobView(await app.services.tables.queueImport(request.tablesBot.id, request.params.table, request.body.fileId)) }))
}
