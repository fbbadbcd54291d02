import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { JobOut, TableParams, jobView } from './common.js'

export default tablesOperation({
  id: 'getTableJobs', api: 'tables', method: 'GET', path: '/:table/jobs', permission: 'tables.read',
  summary: 'The table\'s import, export and delete jobs, newest first (at most 100)',
  params: TableParams,
  response: Type.Object({ jobs: Type.Array(JobOut) }),
  run: async ({ botId, tables }, { params }) => ({ jobs: (await tables.listJobs(botId, params.table)).map(jobView) }),
})
