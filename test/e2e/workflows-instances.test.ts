/**
 * Two Parley instances on one PostgreSQL database run workflows once (docs/workflows.md): each pending workflow, created
 * through either instance, reaches the bot as exactly one `workflow_started`; each one timed out reaches it as exactly
 * one `workflow_timedout`; a recurring event's due occurrence, raced for by both instances' polls and six more services
 * on two more pools, is queued once. (SQLite has one process.)
 */
import { Client } from '@botpress/client'
import { afterAll, describe, expect, it } from 'vitest'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import { loadConfig } from '../../src/config.js'
import { RecurringEventService } from '../../src/domain/recurring-event-service.js'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { testStoreKind } from '../helpers/pg.js'
import { eventually } from '../helpers/runtime-bot.js'
import { adminClient, newDataPlace, startOn, type DataPlace, type Restartable } from '../runtime/helpers.js'

describe.skipIf(testStoreKind() !== 'postgres')('e2e: workflows and recurring events with two instances on PostgreSQL', () => {
  let place: DataPlace
  const servers: Restartable[] = []
  let receiver: BotReceiver | undefined

  afterAll(async () => {
    await receiver?.close()
    for (const s of servers) await s.stop()
    await place?.remove()
  })

  it('each start, timeout and recurring occurrence reaches the bot once', async () => {
    place = await newDataPlace()
    const settings = { runtimeEventPollMs: 50, workflowContinueMs: 50, remoteBots: { timeoutMs: 5_000, budgetMs: 20_000, attempts: 3, backoffMs: 50, maxBackoffMs: 200 } }
    servers.push(await startOn(place, settings), await startOn(place, settings))
    const [a, b] = servers as [Restartable, Restartable]
    const admin = adminClient(a)
    const { bot } = await admin.createBot({ name: 'workflow-instances' })
    const key = await admin.createBotApiKey({ botId: bot.id })
    const clients = [a, b].map((s) => new Client({ apiUrl: s.baseUrl, token: key.value, botId: bot.id }))
    // The bot completes a workflow when told it started (so it is never started again) and answers everything else.
    receiver = await startBotReceiver(async (req) => {
      const event = req.body?.event
      if (event?.type === 'workflow_update' && event.payload.type === 'workflow_started') {
        await clients[0]!.updateWorkflow({ id: event.payload.workflow.id, status: 'completed' })
      }
      return { status: 200 }
    })
    await admin.updateBot({ id: bot.id, url: receiver.url })

    const started: string[] = []
    const timed: string[] = []
    for (let i = 0; i < 10; i++) {
      const client = clients[i % 2]!
      started.push((await client.createWorkflow({ name: 'job', input: { i }, status: 'pending' })).workflow.id)
      timed.push((await client.createWorkflow({ name: 'wait', input: { i }, status: 'listening', timeoutAt: new Date(Date.now() + 200).toISOString() })).workflow.id)
    }
    const updates = () => receiver!.events().map((r) => r.body.event).filter((e) => e.type === 'workflow_update')
    const told = (type: string, id: string) => updates().filter((e) => e.payload.type === type && e.payload.workflow.id === id).length
    await eventually('every workflow to be started and timed out', async () => {
      return started.every((id) => told('workflow_started', id) > 0) && timed.every((id) => told('workflow_timedout', id) > 0) ? true : undefined
    }, 20_000)
    await eventually('every update processed', async () => {
      const { events } = await clients[1]!.listEvents({ type: 'workflow_update' })
      return events.length === 20 && events.every((e) => e.status === 'processed') ? true : undefined
    }, 20_000)
    for (const id of started) {
      expect(told('workflow_started', id), id).toBe(1)
      expect((await clients[1]!.getWorkflow({ id })).workflow.status).toBe('completed')
    }
    for (const id of timed) expect(told('workflow_timedout', id), id).toBe(1)
    expect(updates()).toHaveLength(20)

    // Two instances' services fire the same due occurrence at the same moment: one event.
    const stores = await Promise.all([0, 1].map(() => createAdapters(loadConfig({ PARLEY_DATA_DIR: place.dataDir, PARLEY_DATABASE_URL: place.databaseUrl! }, { databasePoolSize: 2 }))))
    try {
      const past = Date.parse('2020-12-31T23:59:00Z')
      await new RecurringEventService(stores[0]!.store, { clock: () => past }).declare(bot.id, { yearly: { type: 'tick', payload: {}, schedule: { cron: '0 0 1 1 *' } } })
      // Due now (the 2026 occurrence; those of 2021-2025 are skipped): six services on two pools and both instances' polls race for it.
      const fired = await Promise.all(stores.flatMap(({ store }) => [0, 1, 2].map(() => new RecurringEventService(store).fireDue())))
      expect(fired.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(1)
      await eventually('the occurrence to be queued', async () => ((await clients[0]!.listEvents({ type: 'tick' })).events.length > 0 ? true : undefined))
      expect(await new RecurringEventService(stores[1]!.store).fireDue()).toBe(0)
      expect((await clients[0]!.listEvents({ type: 'tick' })).events).toHaveLength(1)
    } finally {
      await Promise.all(stores.map((s) => closeAdapters(s)))
    }
  })
})
