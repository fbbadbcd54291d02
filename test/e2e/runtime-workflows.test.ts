/**
 * Runtime API workflows (data semantics: Parley has no workflow engine) driven by the official
 * @botpress/client@1.45.0 over real HTTP: create, get, update (status, output, tags, timeout),
 * list with the client's filters and paging, getOrCreate with tag and status-group discrimination,
 * delete, timeouts becoming `timedout`, workflow states, and another bot's workflows being 404.
 */
import { InvalidPayloadError, ResourceNotFoundError, type Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { eventually, runtimeBot, type RuntimeBot } from '../helpers/runtime-bot.js'

describe('e2e: Runtime API workflows (official client)', () => {
  let h: Harness
  let bot: RuntimeBot
  let client: Client

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await runtimeBot(h, { states: { progress: { type: 'workflow', schema: { type: 'object', properties: { step: { type: 'integer' } } } } } })
    client = bot.client
  })
  afterAll(async () => h?.close())

  it('create → get → update (status, output, tags, failure) → delete', async () => {
    const { userId, conversationId } = await bot.converse()
    const before = Date.now()
    const { workflow } = await client.createWorkflow({ name: 'checkout', status: 'pending', input: { cart: 3 }, conversationId, userId, tags: { shop: 'a' } })
    expect(workflow).toMatchObject({ name: 'checkout', status: 'pending', input: { cart: 3 }, output: {}, conversationId, userId, tags: { shop: 'a' } })
    expect(Date.parse(workflow.timeoutAt) - before).toBeGreaterThan(23 * 3600 * 1000)
    expect(workflow.completedAt).toBeUndefined()
    expect((await client.getWorkflow({ id: workflow.id })).workflow).toEqual(workflow)

    const running = await client.updateWorkflow({ id: workflow.id, status: 'in_progress', eventId: 'evt-1', tags: { step: 'pay' } })
    expect(running.workflow).toMatchObject({ status: 'in_progress', tags: { shop: 'a', step: 'pay' } })
    const done = await client.updateWorkflow({ id: workflow.id, status: 'completed', output: { paid: true }, tags: { step: null } })
    expect(done.workflow).toMatchObject({ status: 'completed', output: { paid: true }, tags: { shop: 'a' } })
    expect(done.workflow.completedAt).toBeDefined()
    const failed = await client.createWorkflow({ name: 'checkout', status: 'listening' })
    const f = await client.updateWorkflow({ id: failed.workflow.id, status: 'failed', failureReason: 'card declined' })
    expect(f.workflow).toMatchObject({ status: 'failed', failureReason: 'card declined' })

    await client.deleteWorkflow({ id: workflow.id })
    await expect(client.getWorkflow({ id: workflow.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.deleteWorkflow({ id: workflow.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('refuses in_progress without eventId, unknown conversations, users and parents', async () => {
    await expect(client.createWorkflow({ name: 'x', status: 'in_progress' })).rejects.toBeInstanceOf(InvalidPayloadError)
    await expect(client.createWorkflow({ name: 'x', status: 'pending', conversationId: 'nope' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.createWorkflow({ name: 'x', status: 'pending', userId: 'nope' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.createWorkflow({ name: 'x', status: 'pending', parentWorkflowId: 'nope' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.updateWorkflow({ id: 'nope', status: 'paused' })).rejects.toBeInstanceOf(ResourceNotFoundError)
  })

  it('listWorkflows: filters by name, tags, statuses, conversation, parent; pages with nextToken', async () => {
    const name = `list-${Date.now()}`
    const { conversationId } = await bot.converse()
    const parent = (await client.createWorkflow({ name, status: 'pending', tags: { kind: 'parent' } })).workflow
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      ids.push((await client.createWorkflow({ name, status: i % 2 === 0 ? 'pending' : 'listening', parentWorkflowId: parent.id, conversationId, tags: { kind: 'child', n: String(i) } })).workflow.id)
    }
    const children = await client.list.workflows({ name, parentWorkflowId: parent.id }).collect()
    expect(children.map((w) => w.id)).toEqual([...ids].reverse())
    expect((await client.listWorkflows({ name, tags: { kind: 'child', n: '3' } })).workflows.map((w) => w.id)).toEqual([ids[3]])
    expect((await client.listWorkflows({ name, statuses: ['listening'] })).workflows.map((w) => w.id).sort()).toEqual([ids[1], ids[3]].sort())
    expect((await client.listWorkflows({ name, statuses: ['listening', 'pending'], conversationId })).workflows).toHaveLength(5)
    const first = await client.listWorkflows({ name, pageSize: 2 })
    expect(first.workflows).toHaveLength(2)
    expect(first.meta.nextToken).toBeDefined()
    const all = await client.list.workflows({ name }).collect()
    expect(all).toHaveLength(6)
  })

  it('getOrCreateWorkflow: tags (all, or discriminateByTags) and status group discriminate', async () => {
    const name = `goc-${Date.now()}`
    const a = await client.getOrCreateWorkflow({ name, status: 'pending', tags: { order: '1', lang: 'en' } })
    expect(a.meta.created).toBe(true)
    const again = await client.getOrCreateWorkflow({ name, status: 'pending', tags: { order: '1', lang: 'en' } })
    expect(again).toMatchObject({ workflow: { id: a.workflow.id }, meta: { created: false } })
    const otherTags = await client.getOrCreateWorkflow({ name, status: 'pending', tags: { order: '1', lang: 'fr' } })
    expect(otherTags.meta.created).toBe(true)
    const byOrder = await client.getOrCreateWorkflow({ name, status: 'pending', tags: { order: '1', lang: 'de' }, discriminateByTags: ['order'] })
    expect(byOrder.meta.created).toBe(false)
    await client.updateWorkflow({ id: a.workflow.id, status: 'completed' })
    await client.updateWorkflow({ id: otherTags.workflow.id, status: 'completed' })
    const active = await client.getOrCreateWorkflow({ name, status: 'pending', tags: { order: '1', lang: 'en' }, discriminateByStatusGroup: 'active' })
    expect(active.meta.created).toBe(true)
    const finished = await client.getOrCreateWorkflow({ name, status: 'pending', tags: { order: '1', lang: 'en' }, discriminateByStatusGroup: 'finished' })
    expect(finished).toMatchObject({ workflow: { id: a.workflow.id }, meta: { created: false } })
  })

  it('a workflow past its timeoutAt becomes timedout', async () => {
    const { workflow } = await client.createWorkflow({ name: 'short', status: 'listening', timeoutAt: new Date(Date.now() + 500).toISOString() })
    const timedOut = await eventually('the workflow to time out', async () => {
      const { workflow: w } = await client.getWorkflow({ id: workflow.id })
      return w.status === 'timedout' ? w : undefined
    })
    expect(timedOut.completedAt).toBeDefined()
  })

  it('workflow states; another bot cannot see or change these workflows', async () => {
    const { workflow } = await client.createWorkflow({ name: 'stateful', status: 'pending' })
    const progress = await client.setState({ type: 'workflow', id: workflow.id, name: 'progress', payload: { step: 2 } })
    expect(progress.state).toMatchObject({ type: 'workflow', payload: { step: 2 } })
    const other = await runtimeBot(h)
    await expect(other.client.getWorkflow({ id: workflow.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(other.client.updateWorkflow({ id: workflow.id, status: 'cancelled' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(other.client.deleteWorkflow({ id: workflow.id })).rejects.toBeInstanceOf(ResourceNotFoundError)
    expect((await other.client.listWorkflows({ name: 'stateful' })).workflows).toEqual([])
    expect((await client.getWorkflow({ id: workflow.id })).workflow.status).toBe('pending')
  })
})
