/**
 * `bp deploy --dryRun` of an integration (issue #26 item 1): validateIntegrationCreation and validateIntegrationUpdate
 * (@botpress/client@1.45.0) answer `{}` for a body createIntegration / updateIntegration would take, and the error
 * they would answer otherwise, writing nothing either way.
 */
import { isApiError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../runtime/helpers.js'

async function refusal(promise: Promise<unknown>): Promise<{ code: number; type: string; message: string }> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  if (!isApiError(err)) throw new Error(`expected an API error, got ${String(err)}`)
  return { code: err.code, type: err.type, message: err.message }
}

describe('validateIntegrationCreation and validateIntegrationUpdate', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true })
  })

  afterAll(async () => {
    await h?.close()
  })

  it('answer {} for what would be taken and the same error otherwise, writing nothing', async () => {
    const admin = adminClient(h)
    const body = { name: 'dry-run', version: '1.0.0', title: 'Dry run', actions: {}, events: {}, channels: {}, states: {}, secrets: { TOKEN: 'value' } }
    expect(await admin.validateIntegrationCreation(body as never)).toEqual({})
    expect(await refusal(admin.getIntegrationByName({ name: 'dry-run', version: '1.0.0' }))).toMatchObject({ code: 404 })

    expect(await refusal(admin.validateIntegrationCreation({ ...body, version: 'one' } as never))).toMatchObject({ code: 400, type: 'InvalidPayload' })
    expect(await refusal(admin.validateIntegrationCreation({ ...body, code: 'export default 1' } as never))).toMatchObject({ code: 400, message: expect.stringMatching(/code must be the CommonJS bundle/) })
    expect(await refusal(admin.validateIntegrationCreation({ ...body, interfaces: { typing: { id: 'nope' } } } as never))).toMatchObject({ code: 400, type: 'ReferenceNotFound' })

    const { integration } = await admin.createIntegration(body as never)
    expect(await refusal(admin.validateIntegrationCreation(body as never))).toMatchObject({ code: 409, type: 'AlreadyExists' })

    expect(await admin.validateIntegrationUpdate({ id: integration.id, title: 'Changed', url: 'http://127.0.0.1:8072/' } as never)).toEqual({})
    expect(await refusal(admin.validateIntegrationUpdate({ id: integration.id, actions: 'none' } as never))).toMatchObject({ code: 400, type: 'InvalidPayload' })
    expect(await refusal(admin.validateIntegrationUpdate({ id: 'missing', title: 'x' } as never))).toMatchObject({ code: 404 })
    const { integration: after } = await admin.getIntegration({ id: integration.id })
    expect(after.title).toBe('Dry run')
    expect(after.url).toBe('')
  })
})
