import { Type } from 'typebox'
import { tablesOperation } from '../../operations/operation.js'
import { AnyObject, TableParams } from './common.js'

export default tablesOperation({
  id: 'deleteTableRows', api: 'tables', method: 'POST', path: '/:table/rows/delete', permission: 'tables.write',
  summary: 'Delete rows by ids (at once), or by filter / all rows (a delete_rows job, see getTableJobs)',
  params: TableParams,
  body: Type.Object({ ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000 })), filter: Type.Optional(AnyObject), deleteAllRows: Type.Optional(Type.Boolean()) }),
  response: Type.Object({ deletedRows: Type.Integer(), job: Type.Optional(Type.Object({ id: Type.String(), status: Type.String() })) }),
  run: async ({ botId, tables }, { params, body }) => {
    const r = await tables.deleteRows(botId, params.table, body)
    return { deletedRows: r.deletedRows, ...(r.job ? { job: { id: r.job.id, status: r.job.status } } : {}) }
  },
})
