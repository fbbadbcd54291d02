import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { JobOut, TableParams, jobView } from './common.js'

export default tablesOperation({
  id: 'importTable', api: 'tables', method: 'POST', path: '/:table/import', permission: 'tables.write',
  summary: 'Import rows from a file of the Files API (CSV with a header line, or a JSON array / JSON lines) as a job',
  params: TableParams,
  body: Type.Object({ fileId: Type.String({ minLength: 1, maxLength: 500 }) }),
  response: Type.Object({ job: JobOut }),
  run: async ({ botId, tables }, { params, body }) => ({ job: jobView(await tables.queueImport(botId, params.table, body.fileId)) }),
})
