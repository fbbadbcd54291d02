import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'

describe('smoke', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h.close())

  it('answers the hello probe for a known webhook and 404 for an unknown one', async () => {
    const ok = await h.app.inject({ method: 'GET', url: `/${h.credentials.chat.webhookId}/hello/` })
    expect(ok.statusCode).toBe(200)
    const missing = await h.app.inject({ method: 'GET', url: `/no-such-webhook/hello/` })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ code: 404, type: 'ResourceNotFound' })
  })
})
