/**
 * trackAnalytics, captureObservation and configureIntegration through the official
 * @botpress/client@1.45.0: answered as the client expects ({}), stored (analytics counters per day,
 * observations bounded per bot, registrations per integration) and readable in the bot's logs.
 */
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeBot, type RuntimeBot } from '../helpers/runtime-bot.js'
import { allLogs } from '../runtime/helpers.js'
import { Client } from '@botpress/client'

describe('e2e: Runtime API analytics, observations, configureIntegration (official client)', () => {
  let h: Harness
  let bot: RuntimeBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { runtimeObservationsKept: 3 } })
    bot = await runtimeBot(h)
  })
  afterAll(async () => h?.close())

  const messages = async () => (await allLogs(h, bot.id)).logs.map((l) => l.message)

  it('trackAnalytics adds to the day\'s counter and logs it', async () => {
    expect(await bot.client.trackAnalytics({ name: 'signup', count: 2 })).toEqual({})
    await bot.client.trackAnalytics({ name: 'signup', count: 3 })
    const { items } = await h.store.telemetry.listAnalytics(bot.id, { limit: 10 })
    expect(items).toEqual([expect.objectContaining({ name: 'signup', count: 5, day: new Date().toISOString().slice(0, 10) })])
    expect(await messages()).toEqual(expect.arrayContaining(['analytics signup +2', 'analytics signup +3']))
    await expect(bot.client.trackAnalytics({ name: '', count: 1 })).rejects.toBeInstanceOf(InvalidPayloadError)
  })

  it('captureObservation stores the newest ones (bounded) and logs them', async () => {
    const { conversationId } = await bot.converse()
    for (let i = 0; i < 5; i++) expect(await bot.client.captureObservation({ name: 'latency', data: { ms: i }, conversationId })).toEqual({})
    const { items } = await h.store.telemetry.listObservations(bot.id, { limit: 10 })
    expect(items.map((o) => o.data.ms)).toEqual([4, 3, 2])
    expect(items[0]!.refs).toEqual({ conversationId })
    expect(await messages()).toContain('observation latency {"ms":4}')
    // The same id again replaces it.
    await bot.client.captureObservation({ id: 'obs-1', name: 'a', data: { v: 1 } })
    await bot.client.captureObservation({ id: 'obs-1', name: 'a', data: { v: 2 } })
    const again = (await h.store.telemetry.listObservations(bot.id, { limit: 10 })).items.filter((o) => o.id === 'obs-1')
    expect(again.map((o) => o.data)).toEqual([{ v: 2 }])
  })

  it('configureIntegration stores the identifier on the integration the headers name', async () => {
    const asChat = new Client({ apiUrl: h.baseUrl, token: bot.apiKey, botId: bot.id, integrationId: bot.chat.integrationId })
    expect(await asChat.configureIntegration({ identifier: 'workspace-42', scheduleRegisterCall: 'daily' })).toEqual({})
    expect(await h.store.telemetry.getRegistration(bot.chat.integrationId)).toMatchObject({ identifier: 'workspace-42', scheduleRegisterCall: 'daily', sandboxIdentifiers: null })
    await asChat.configureIntegration({ identifier: null })
    expect(await h.store.telemetry.getRegistration(bot.chat.integrationId)).toMatchObject({ identifier: null, scheduleRegisterCall: 'daily' })
    const unknown = new Client({ apiUrl: h.baseUrl, token: bot.apiKey, botId: bot.id, integrationId: 'nope' })
    await expect(unknown.configureIntegration({ identifier: 'x' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    expect(await messages()).toContain('integration chat configured: {"identifier":"workspace-42","scheduleRegisterCall":"daily"}')
  })
})
