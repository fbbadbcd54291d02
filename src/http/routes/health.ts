import { Type } from 'typebox'
import type { App } from '../types.js'
import { ErrorBody } from '../schemas/common.js'
import { errors } from '../../lib/errors.js'

export default function healthRoutes(app: App): void {
  app.get('/healthz', {
    schema: { operationId: 'healthz', tags: ['ops'], summary: 'Liveness: the process is up', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }))

  app.get('/readyz', {
    schema: {
      operationId: 'readyz', tags: ['ops'], summary: 'Readiness: the database answers',
      response: { 200: Type.Object({ status: Type.Literal('ready') }), '5XX': ErrorBody },
    },
  }, async () => {
    try {
      await app.services.store.ping()
    } catch {
      // 503, not 500: a load balancer takes the instance out of rotation until the database answers.
      throw errors.unavailable()
    }
    return { status: 'ready' as const }
  })
}
