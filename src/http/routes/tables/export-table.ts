import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { JobOut, TableParams, jobView } from './common.js'

export default tablesOperation({
  id: 'exportTable', api: 'tables', method: 'GET', path: '/:table/export', permission: 'tables.read',
  summary: 'Export the rows to a file of the Files API (outputFileId of the completed job) as a job',
  params: TableParams,
  query: Type.Object({ format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('json')])), compress: Type.Optional(Type.Boolean()) }),
  response: Type.Object({ job: JobOut }),
  run: async ({ botId, tables }, { params, query }) => ({ job: jobView(await tables.queueExport(botId, params.table, query.format ?? 'json', query.compress ?? false)) }),
})
