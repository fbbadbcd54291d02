/**
 * getBotQualityAnalytics (GET /v1/admin/bots/{id}/analytics/quality) over real HTTP after a scripted day
 * (test/helpers/quality-day.ts): handoffs and their waits, failed and timed-out turns, knowledge searches without a
 * good passage and feedback on the bot's messages match the counts the script made; getBotAnalytics (official
 * client) matches the same day's messages and users; other days are zeros; each failure is recorded once (the store's
 * keys), bad ranges are 400s in the Botpress error body, another workspace's bot a 404, an agent a 403.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { accountWithRole } from '../api/files-helpers.js'
import { QUALITY_DAY_CONFIG, scriptedQualityDay, sumRecords, type QualityDayCounts } from '../helpers/quality-day.js'
import type { TestBot } from '../runtime/helpers.js'

const DAY = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

describe('e2e: getBotQualityAnalytics after a scripted day', () => {
  let h: Harness
  let bot: TestBot
  let counts: QualityDayCounts
  let first: number

  const get = async (path: string, token = h.credentials.token, workspaceId = h.credentials.workspaceId) => {
    const res = await fetch(`${h.baseUrl}/v1/admin${path}`, { headers: { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId } })
    return { status: res.status, body: await res.json() as any }
  }

  beforeAll(async () => {
    h = await startParley({ listen: true, config: QUALITY_DAY_CONFIG })
    first = Date.now()
    ;({ bot, counts } = await scriptedQualityDay(h))
  }, 120_000)
  afterAll(async () => h?.close())

  it('the day\'s records count what the script did; the day before is zeros', async () => {
    const range = `startDate=${isoDay(first - DAY)}&endDate=${isoDay(Date.now())}`
    const { status, body } = await get(`/bots/${bot.id}/analytics/quality?${range}`)
    expect(status).toBe(200)
    const [before, ...days] = body.records
    expect(before).toMatchObject({
      startDateTimeUtc: `${isoDay(first - DAY)}T00:00:00.000Z`, endDateTimeUtc: `${isoDay(first - DAY)}T23:59:59.999Z`,
      handoffsRequested: 0, handoffsClaimed: 0, handoffWaitMeanSeconds: 0, handoffWaitMaxSeconds: 0, failedTurns: 0, timedOutTurns: 0,
      knowledgeSearches: 0, knowledgeNoAnswer: 0, positiveFeedback: 0, negativeFeedback: 0,
    })
    const sum = sumRecords(days)
    expect(sum).toMatchObject({
      handoffsRequested: counts.handoffsRequested, handoffsClaimed: counts.handoffsClaimed,
      failedTurns: counts.failedTurns, timedOutTurns: counts.timedOutTurns,
      knowledgeSearches: counts.knowledgeSearches, knowledgeNoAnswer: counts.knowledgeNoAnswer,
      positiveFeedback: counts.positiveFeedback, negativeFeedback: counts.negativeFeedback,
    })
    // The script's searches include an unanswerable one, so the series is not trivially zero.
    expect(counts.knowledgeNoAnswer).toBeGreaterThan(0)
    // The wait of the one claimed handoff, on the day it was requested (the Admin API's own timestamps, ms → s).
    const withHandoffs = days.filter((r: any) => r.handoffsClaimed > 0)
    expect(withHandoffs).toHaveLength(1)
    expect(withHandoffs[0].handoffWaitMeanSeconds).toBeCloseTo(counts.handoffWaitsSeconds[0]!, 3)
    expect(withHandoffs[0].handoffWaitMaxSeconds).toBeCloseTo(Math.max(...counts.handoffWaitsSeconds), 3)
    expect(withHandoffs[0].handoffWaitMeanSeconds).toBeGreaterThan(0)

    // getBotAnalytics (the official client, its record shape unchanged) agrees on the same day's traffic.
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    const { records } = await admin.getBotAnalytics({ id: bot.id, startDate: isoDay(first), endDate: isoDay(Date.now()) })
    expect(sumRecords(records)).toMatchObject({ userMessages: counts.userMessages, botMessages: counts.botMessages, newUsers: counts.users, sessions: counts.users })
    expect(Object.keys(records[0]!).sort()).toEqual(['botMessages', 'customEvents', 'endDateTimeUtc', 'eventTypes', 'events', 'llm', 'messages', 'newUsers', 'returningUsers', 'sessions', 'startDateTimeUtc', 'userMessages'])
  })

  it('a failure or a search recorded again (a turn run again after a restart) counts once', async () => {
    const now = Date.now()
    const row = { botId: bot.id, sourceId: `again-${now}`, conversationId: null, kind: 'message' as const, reason: 'error' as const, createdAt: now }
    await h.store.quality.recordTurnFailure(row)
    await h.store.quality.recordTurnFailure({ ...row, reason: 'timeout' })
    const search = { botId: bot.id, id: `again-${now}`, conversationId: null, query: 'x'.repeat(2000), noAnswer: true, bestRelevance: null, createdAt: now }
    await h.store.quality.recordKnowledgeSearch(search)
    await h.store.quality.recordKnowledgeSearch({ ...search, noAnswer: false })
    const { body } = await get(`/bots/${bot.id}/analytics/quality?startDate=${isoDay(first)}&endDate=${isoDay(now)}`)
    expect(sumRecords(body.records)).toMatchObject({
      failedTurns: counts.failedTurns + 1, timedOutTurns: counts.timedOutTurns,
      knowledgeSearches: counts.knowledgeSearches + 1, knowledgeNoAnswer: counts.knowledgeNoAnswer + 1,
    })
  })

  it('bad ranges are 400s; another workspace\'s bot is a 404; a viewer reads, an agent may not', async () => {
    const today = isoDay(Date.now())
    for (const [q, says] of [
      [`startDate=yesterday&endDate=${today}`, /startDate must be an ISO 8601 date/],
      [`startDate=${today}&endDate=${isoDay(Date.now() - DAY)}`, /endDate .* is before startDate/],
      ['startDate=2020-01-01&endDate=2026-01-01', /at most 366/],
    ] as const) {
      const { status, body } = await get(`/bots/${bot.id}/analytics/quality?${q}`)
      expect(status).toBe(400)
      expect(body).toMatchObject({ code: 400, type: 'InvalidQuery', id: expect.any(String) })
      expect(body.message).toMatch(says)
    }
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    const ws = await admin.createWorkspace({ name: 'elsewhere' })
    expect((await get(`/bots/${bot.id}/analytics/quality?startDate=${today}&endDate=${today}`, h.credentials.token, ws.id)).status).toBe(404)
    const viewer = await accountWithRole(h, 'viewer')
    expect((await get(`/bots/${bot.id}/analytics/quality?startDate=${today}&endDate=${today}`, viewer.token)).body.records).toHaveLength(1)
    const agent = await accountWithRole(h, 'agent')
    const denied = await get(`/bots/${bot.id}/analytics/quality?startDate=${today}&endDate=${today}`, agent.token)
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ code: 403, type: 'Forbidden' })
  })
})
