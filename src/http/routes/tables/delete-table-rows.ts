import { Type } from 'typebox'
import type { App } from '../../types.js'
import { AnyObject, TableParams, tablesSchema } from './common.js'

export default function deleteTableRows(app: App): void {
  app.post('/:table/rows/delete', {
    config: { permission: 'tables.write' },
    schema: tablesSchema('deleteTableRows', 'Delete rows by ids (at once), or by filter / all rows (a delete_rows job, see getTableJobs)', {
      params: TableParams,
      body: Type.Object({ ids: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000 })), filter: Type.Optional(AnyObject), deleteAllRows: Type.Optional(Type.Boolean()) }),
    }, { 200: Type.Object({ deletedRows: Type.Integer(), job: Type.Optional(Type.Object({ id: Type.String(), status: Type.String() })) }) }),
  }, async (request) => {
    const r = await app.services.tables.deleteRows(request.tablesBot.id, request.params.table, request.body)
    return { deletedRows: r.deletedRows, ...(r.job ? { job: { id: r.job.id, status: r.job.status } } : {}) }
  })
}
