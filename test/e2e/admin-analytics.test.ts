/**
 * getBotAnalytics through the official `@botpress/client@1.45.0` over real HTTP, after a scripted stretch of
 * traffic (chat users through `@botpress/chat`, bot messages, Runtime API events and trackAnalytics counters):
 * today's record matches the counts made in the test, the other days of the range are zeros, every record has
 * the client's shape; bad ranges are 400s in the Botpress error body, another workspace's bot a 404, and a
 * viewer may read.
 */
import { Client, InvalidQueryError, ResourceNotFoundError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeBot, type RuntimeBot } from '../helpers/runtime-bot.js'
import { accountWithRole } from '../api/files-helpers.js'

const DAY = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

describe('e2e: getBotAnalytics (official client)', () => {
  let h: Harness
  let bot: RuntimeBot
  const today = Date.now()

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await runtimeBot(h)
  })
  afterAll(async () => h?.close())

  it('today\'s record counts what the test sent; the other days of the range are zeros', async () => {
    const sent = { users: 3, userMessages: 0, botMessages: 0 }
    for (let u = 0; u < sent.users; u++) {
      const { user, conversationId, userId } = await bot.converse()
      for (let i = 0; i <= u; i++) {
        await user.createMessage({ conversationId, payload: { type: 'text', text: `message ${i} of user ${userId}` } })
        sent.userMessages++
      }
      await bot.client.createMessage({ conversationId, userId: bot.id, type: 'text', payload: { text: 'an answer' }, tags: {} })
      sent.botMessages++
    }
    await bot.client.createEvent({ type: 'inventoryChanged', payload: { sku: 'a1' } })
    await bot.client.createEvent({ type: 'inventoryChanged', payload: { sku: 'b2' } })
    await bot.client.trackAnalytics({ name: 'signup', count: 2 })
    await bot.client.trackAnalytics({ name: 'signup', count: 1 })

    const { records } = await bot.admin.getBotAnalytics({ id: bot.id, startDate: isoDay(today - 2 * DAY), endDate: isoDay(today) })
    expect(records.map((r) => r.startDateTimeUtc.slice(0, 10))).toEqual([isoDay(today - 2 * DAY), isoDay(today - DAY), isoDay(today)])
    const [before, , now] = records
    expect(now).toMatchObject({
      newUsers: sent.users, returningUsers: 0, sessions: sent.users,
      userMessages: sent.userMessages, messages: sent.userMessages, botMessages: sent.botMessages,
      customEvents: { signup: 3 },
    })
    expect(now!.eventTypes.inventoryChanged).toBe(2)
    expect(now!.events).toBe(Object.values(now!.eventTypes).reduce((s, n) => s + n, 0))
    expect(now!.endDateTimeUtc).toBe(`${isoDay(today)}T23:59:59.999Z`)
    expect(before).toMatchObject({ newUsers: 0, returningUsers: 0, sessions: 0, userMessages: 0, botMessages: 0, events: 0, eventTypes: {}, customEvents: {} })
    expect(before!.llm).toMatchObject({ calls: 0, errors: 0, inputTokens: 0, outputTokens: 0, latency: { mean: 0, sd: 0, min: 0, max: 0 }, cost: { sum: 0 } })
  })

  it('a viewer reads it; another workspace\'s bot is a 404; bad ranges are 400s naming the problem', async () => {
    const viewer = await accountWithRole(h, 'viewer')
    const asViewer = new Client({ apiUrl: h.baseUrl, token: viewer.token, workspaceId: h.credentials.workspaceId })
    expect((await asViewer.getBotAnalytics({ id: bot.id, startDate: isoDay(today), endDate: isoDay(today) })).records).toHaveLength(1)

    const ws = await bot.admin.createWorkspace({ name: 'elsewhere' })
    const elsewhere = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: ws.id })
    await expect(elsewhere.getBotAnalytics({ id: bot.id, startDate: isoDay(today), endDate: isoDay(today) })).rejects.toBeInstanceOf(ResourceNotFoundError)

    const bad = async (startDate: string, endDate: string, says: RegExp) => {
      const err = await bot.admin.getBotAnalytics({ id: bot.id, startDate, endDate }).then(() => undefined, (e: unknown) => e)
      expect(err).toBeInstanceOf(InvalidQueryError)
      expect((err as InvalidQueryError).message).toMatch(says)
    }
    await bad('yesterday', isoDay(today), /startDate must be an ISO 8601 date/)
    await bad(isoDay(today), isoDay(today - DAY), /endDate .* is before startDate/)
    await bad('2020-01-01', '2026-01-01', /at most 366/)
    // the raw answer is the Botpress error body
    const res = await fetch(`${h.baseUrl}/v1/admin/bots/${bot.id}/analytics?startDate=x&endDate=y`, { headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId } })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ code: 400, type: 'InvalidQuery', id: expect.any(String), message: expect.any(String) })
  })
})
