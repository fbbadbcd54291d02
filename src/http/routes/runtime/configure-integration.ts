import { Type } from 'typebox'
import type { App } from '../../types.js'
import type { JsonObject } from '../../../store/store.js'
import { EmptyObject, StringMap } from '../../schemas/common.js'
import { runtimeSchema } from './common.js'

const header = (value: string | string[] | undefined) => (typeof value === 'string' && value !== '' ? value : undefined)

export default function configureIntegration(app: App): void {
  app.post('/integrations/configure', {
    config: { permission: 'runtime.write', installation: {} },
    schema: runtimeSchema('configureIntegration', 'Stores an integration\'s identifier, register schedule and sandbox identifiers on the integration named by x-integration-id (id or name) or x-integration-alias',
      {
        body: Type.Object({
          identifier: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Null()])),
          scheduleRegisterCall: Type.Optional(Type.Union(['hourly', 'daily', 'weekly', 'bi-weekly', 'monthly', 'bi-monthly', 'quarterly', 'yearly'].map((v) => Type.Literal(v)))),
          sandboxIdentifiers: Type.Optional(Type.Union([StringMap(Type.Unknown()), Type.Null()])),
        }),
      }, { 200: EmptyObject }),
  }, async (request) => {
    const ref = header(request.headers['x-integration-id']) ?? header(request.headers['x-integration-alias'])
    const { identifier, scheduleRegisterCall, sandboxIdentifiers } = request.body
    await app.services.runtimeTelemetry.configureIntegration(request.runtimeBot, ref, {
      identifier, scheduleRegisterCall: scheduleRegisterCall as string | undefined, sandboxIdentifiers: sandboxIdentifiers as JsonObject | null | undefined,
    })
    return {}
  })
}
