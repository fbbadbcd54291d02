/**
 * Workflows run and recurring events fire (issue #25, docs/workflows.md), with an unchanged @botpress/sdk@5.4.3 bot
 * (test/fixtures/sdk-bots/workflow-bot.mjs) in a child process, as bots/bugbuster's lintAll runs: a recurring event
 * starts a workflow created `pending`, the bot gets `workflow_started` (then `workflow_continued`), keeps its progress
 * in an undeclared workflow state, and completes it; a listening workflow is timed out and told; a child workflow's end
 * is told to its parent. The recurring event is fired by a RecurringEventService with an injected clock (the next
 * occurrence of a yearly schedule), on the harness's own store; the app's own poll delivers it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Client } from '@botpress/client'
import { startParley, type Harness } from '../helpers/harness.js'
import { failure, runtimeClient } from '../helpers/runtime-client.js'
import { eventually } from '../helpers/runtime-bot.js'
import type { SdkBot } from '../helpers/sdk-bot.js'
import { adminClient, createBot, STREAM_CONFIG, Talk, uid } from './helpers.js'
import { deploySdkBot } from '../helpers/sdk-bot.js'
import { RecurringEventService } from '../../src/domain/recurring-event-service.js'
import { nextOccurrence, parseCron } from '../../src/lib/cron.js'
import { WorkflowEngine } from '../../src/domain/workflow-engine.js'
import type { NewRuntimeEvent, RuntimeEventRow } from '../../src/store/runtime-event-store.js'

const REMOTE = { timeoutMs: 5_000, budgetMs: 20_000, attempts: 3, backoffMs: 50, maxBackoffMs: 200 }
const YEARLY = '0 0 1 1 *'

/** The workflow's update events, oldest first: [payload.type, status]. */
async function updates(client: Client, workflowId: string): Promise<[string, string][]> {
  const { events } = await client.listEvents({ workflowId, type: 'workflow_update' })
  return events.reverse().map((e) => [String((e.payload as { type: string }).type), e.status])
}

describe('SDK workflows and recurring events', () => {
  let h: Harness
  let client: Client
  let botId: string
  const programs: SdkBot[] = []

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, remoteBots: REMOTE, runtimeEventPollMs: 50, workflowContinueMs: 50 } })
    const { bot, program } = await deploySdkBot(h, 'workflow-bot.mjs')
    programs.push(program)
    botId = bot.id
    client = await runtimeClient(h, bot.id)
  })
  afterAll(async () => {
    await Promise.all(programs.map((p) => p.stop()))
    await h?.close()
  })

  it('a recurring event missed for years fires once; its handler starts a pending workflow that runs to completion with a workflow state', async () => {
    const admin = adminClient(h)
    const recurringEvents = { yearly: { type: 'timeToLint', payload: { from: 'admin' }, schedule: { cron: YEARLY } } }
    await admin.updateBot({ id: botId, recurringEvents } as never)
    expect((await admin.getBot({ id: botId })).bot.recurringEvents).toEqual({ yearly: { ...recurringEvents.yearly, failedAttempts: 0 } })
    // Declared before 2021-01-01 (a clock in the past): six yearly occurrences have been missed since; the app's own
    // poll fires the latest one only.
    await new RecurringEventService(h.store, { clock: () => Date.parse('2020-12-31T23:59:00Z') })
      .declare(botId, { missed: { type: 'timeToLint', payload: { from: 'cron' }, schedule: { cron: YEARLY } } })
    const workflow = await eventually('the lint workflow to complete', async () => {
      const { workflows } = await client.listWorkflows({ name: 'lint' })
      return workflows[0]?.status === 'completed' ? workflows[0] : undefined
    }, 15_000).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${programs[0]!.output()}\n${JSON.stringify((await client.listEvents({})).events)}\n${JSON.stringify((await client.listWorkflows({})).workflows)}`)
    })
    expect(workflow.output).toEqual({ done: 2, conversationId: null })
    const { state } = await client.getState({ type: 'workflow', id: workflow.id, name: 'progress' })
    expect(state.payload).toEqual({ done: 1, continued: true })
    expect(await updates(client, workflow.id)).toEqual([['workflow_started', 'processed'], ['workflow_continued', 'processed']])
    const fired = await client.listEvents({ type: 'timeToLint' })
    expect(fired.events.map((e) => [e.payload, e.status])).toEqual([[{ from: 'cron' }, 'processed']])
    // That occurrence again (another instance's poll): nothing; the next is next year's.
    expect(await new RecurringEventService(h.store).fireDue()).toBe(0)
    const next = nextOccurrence(parseCron(YEARLY), Date.now())!
    expect(await new RecurringEventService(h.store, { clock: () => next - 1 }).fireDue()).toBe(0)
  })

  it('a listening workflow times out at timeoutAt and the bot gets workflow_timedout', async () => {
    const { workflow } = await client.createWorkflow({ name: 'wait', input: {}, status: 'pending', timeoutAt: new Date(Date.now() + 500).toISOString() })
    const { state } = await eventually('the timeout handler\'s state', () => client.getState({ type: 'workflow', id: workflow.id, name: 'timeout' }).catch(() => undefined), 15_000)
    expect(state.payload).toEqual({ status: 'timedout' })
    expect((await client.getWorkflow({ id: workflow.id })).workflow.status).toBe('timedout')
    const told = await updates(client, workflow.id)
    expect(told.filter(([type]) => type === 'workflow_timedout')).toEqual([['workflow_timedout', 'processed']])
  })

  it('a child workflow runs and its end is told to its parent; conversation scoping holds', async () => {
    const talk = await Talk.open(await botOf(h, botId), { userId: uid('user') })
    try {
      const { workflow: parent } = await client.createWorkflow({ name: 'parent', input: {}, status: 'pending', conversationId: talk.conversationId })
      const child = await eventually('the child to complete', async () => {
        const { workflows } = await client.listWorkflows({ parentWorkflowId: parent.id })
        return workflows[0]?.status === 'completed' ? workflows[0] : undefined
      }, 15_000)
      expect(child).toMatchObject({ name: 'child', output: { n: 42 }, parentWorkflowId: parent.id, conversationId: talk.conversationId })
      await eventually('the parent to hear of it', async () => {
        const told = await updates(client, parent.id)
        return told.some(([type, status]) => type === 'child_workflow_finished' && status === 'processed') ? told : undefined
      })
      expect((await client.getWorkflow({ id: parent.id })).workflow.status).toBe('listening')
      const inConversation = await client.listWorkflows({ conversationId: talk.conversationId })
      expect(inConversation.workflows.map((w) => w.name).sort()).toEqual(['child', 'parent'])
      expect((await client.listWorkflows({ conversationId: talk.conversationId, name: 'lint' })).workflows).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('workflow states need no declaration, on the bot\'s own workflows only', async () => {
    const { workflow } = await client.createWorkflow({ name: 'other', input: {}, status: 'in_progress', eventId: 'evt-1' })
    await client.setState({ type: 'workflow', id: workflow.id, name: 'anything', payload: { a: 1 } })
    expect((await client.getState({ type: 'workflow', id: workflow.id, name: 'anything' })).state.payload).toEqual({ a: 1 })
    expect((await failure(client.setState({ type: 'workflow', id: 'wf-not-there', name: 'anything', payload: {} }))).code).toBe(404)
    // A non-workflow state still needs its declaration.
    expect((await failure(client.setState({ type: 'bot', id: botId, name: 'undeclared', payload: {} }))).code).toBe(400)
  })

  it('a workflow its bot never acknowledges is started 3 more times, then failed with the reason', async () => {
    const { workflow } = await client.createWorkflow({ name: 'lazy', input: {}, status: 'pending' })
    const failed = await eventually('the workflow to fail', async () => {
      const { workflow: now } = await client.getWorkflow({ id: workflow.id })
      return now.status === 'failed' ? now : undefined
    }, 15_000)
    expect(failed.failureReason).toBe('The bot did not acknowledge the workflow\'s start after 4 workflow_started updates')
    expect(await updates(client, workflow.id)).toEqual(Array.from({ length: 4 }, () => ['workflow_started', 'processed']))
  })

  it("a finished workflow's status cannot change (a late update after the timeout sweep revived it)", async () => {
    const { workflow } = await client.createWorkflow({ name: 'other', input: {}, status: 'in_progress', eventId: 'evt-2' })
    await client.updateWorkflow({ id: workflow.id, status: 'completed' })
    const err = await failure(client.updateWorkflow({ id: workflow.id, status: 'listening' }))
    expect(err.code).toBe(400)
    expect(err.message).toBe(`Workflow "${workflow.id}" is completed: a finished workflow's status cannot change`)
    expect((await client.updateWorkflow({ id: workflow.id, output: { late: true } })).workflow).toMatchObject({ status: 'completed', output: { late: true } })
  })

  it('a bad cron expression is refused with the reason', async () => {
    const err = await failure(adminClient(h).updateBot({ id: botId, recurringEvents: { bad: { type: 't', payload: {}, schedule: { cron: '61 * * * *' } } } } as never))
    expect(err.code).toBe(400)
    expect(err.message).toMatch(/recurringEvents\.bad\.schedule\.cron "61 \* \* \* \*": minute 61 is outside 0-59/)
  })

  it('an idle in_progress workflow is continued less often (the wait doubles, up to the cap) and at the first pace once the bot updates it', async () => {
    // The engine on the harness's store with an injected clock: a day of continuations in a few hundred steps. Each
    // step is what the runtime event queue does with a delivered workflow_continued (the bot answered and left the
    // workflow in_progress): it asks the engine for the next one.
    const { workflow } = await client.createWorkflow({ name: 'idle', input: {}, status: 'in_progress', eventId: 'evt-idle' })
    let now = Date.parse('2030-01-01T00:00:00Z')
    const engine = new WorkflowEngine(h.store, { continueMs: 1_000, maxContinueMs: 300_000, clock: () => now })
    const delivered = (e: NewRuntimeEvent) => ({
      conversationId: null, userId: null, messageId: null, installationId: null, failureReason: null, attempts: 1,
      leaseOwner: null, leaseUntil: 0, conversationSeq: null, integrationId: null, processedAt: null, ...e, status: 'pending',
    }) as RuntimeEventRow
    /** Continuations until `until` (at most 1,000), each answered; `during(i)` runs while the i-th is with the bot. Their waits. */
    async function continueUntil(first: NewRuntimeEvent, until: number, during: (i: number) => Promise<void> = async () => {}) {
      const waits: number[] = []
      let next: NewRuntimeEvent | undefined = first
      while (next && next.dueAt <= until && waits.length < 1_000) {
        waits.push(next.dueAt - now)
        now = next.dueAt
        await during(waits.length)
        ;[next] = await engine.next(delivered(next), { status: 'processed' })
      }
      return { waits, next: next! }
    }
    const started = delivered({ id: 'started', botId, type: 'workflow_update', payload: { type: 'workflow_started' }, workflowId: workflow.id, status: 'pending', dueAt: now, createdAt: now })
    const [first] = await engine.next(started, { status: 'processed' })
    // A day idle: 1 s, 2 s, 4 s… 256 s, then every 5 minutes (it was every second: 86,400 continuations).
    const day = await continueUntil(first!, now + 86_400_000)
    expect(day.waits.slice(0, 11)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * 1_000))
    expect(day.waits.length).toBe(9 + Math.floor((86_400 - 511) / 300)) // 295
    // The bot updates it (any field) while the 3rd continuation is with it: the next one after 1 s again, then doubling.
    const woken = await continueUntil(day.next, now + 3_600_000, async (i) => {
      if (i !== 3) return
      await new Promise((resolve) => setTimeout(resolve, 2)) // another millisecond than the last update's
      await client.updateWorkflow({ id: workflow.id, output: { step: 1 } })
    })
    expect(woken.waits.slice(0, 6)).toEqual([300, 300, 300, 1, 2, 4].map((s) => s * 1_000))
  })

  it("a sandboxed bot's workflow updates are recorded as ignored, with the reason", async () => {
    const bot = await createBot(h, 'export default {}')
    const sandboxed = await runtimeClient(h, bot.id)
    const { workflow } = await sandboxed.createWorkflow({ name: 'w', input: {}, status: 'pending' })
    const told = await eventually('the update to be ignored', async () => {
      const { events } = await sandboxed.listEvents({ workflowId: workflow.id })
      return events[0]?.status === 'ignored' ? events : undefined
    })
    expect(told[0]!.failureReason).toMatch(/sandbox/)
    expect((await sandboxed.getWorkflow({ id: workflow.id })).workflow.status).toBe('pending')
  })
})

async function botOf(h: Harness, id: string) {
  const { bot } = await adminClient(h).getBot({ id })
  const chat = bot.integrations.chat!
  return { id, url: chat.webhookUrl, webhookId: chat.webhookId, encryptionKey: chat.configuration.encryptionKey as string }
}
