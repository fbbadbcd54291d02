import { Type } from 'typebox'
import type { App } from '../../types.js'
import { JobOut, TableParams, jobView, tablesSchema } from './common.js'

export default function getTableJobs(app: App): void {
  app.get('/:table/jobs', {
    config: { permission: 'tables.read' },
    schema: tablesSchema('getTableJobs', 'The table\'s import, export and delete jobs, newest first (at most 100)', { params: TableParams }, { 200: Type.Object({ jobs: Type.Array(JobOut) }) }),
  }, async (request) => ({ jobs: (await app.services.tables.listJobs(request.tablesBot.id, request.params.table)).map(jobView) }))
}
