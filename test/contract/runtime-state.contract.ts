/**
 * Contract of the Runtime API's store parts of migration 0007 (src/store/state-store.ts,
 * runtime-event-store.ts, workflow-store.ts, telemetry-store.ts), run against each engine: state
 * writes (set, patch, getOrSet), expiry (invisible at once, swept once with its event queued, an
 * expired state written again is expired first), the event queue (due order, leases, one claimer
 * per event even across instances, only the holder finishes, cancel), workflows (filters, tags,
 * paging, getOrCreate with one winner, timeouts) and the telemetry tables (sums, bounded observations,
 * registrations). `second` is another pool on the same database on PostgreSQL.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NewRuntimeEvent } from '../../src/store/runtime-event-store.js'
import type { ExpiredEvent, StateKey, StateWrite } from '../../src/store/state-store.js'
import type { Store } from '../../src/store/store.js'
import type { NewWorkflow } from '../../src/store/workflow-store.js'
import { seed } from './store.contract.js'

export type RuntimeStateStoreFactory = () => Promise<{ store: Store; second: Store; cleanup: () => Promise<void> }>

export function describeRuntimeStateContract(name: string, factory: RuntimeStateStoreFactory): void {
  describe(`Runtime API store parts contract: ${name}`, () => {
    let store: Store
    let second: Store
    let cleanup: () => Promise<void>
    let botId: string
    let otherBotId: string
    let integrationId: string
    /** Each test works at its own, later time, so rows left by an earlier test never interfere. */
    let epoch = 0
    const later = () => (++epoch) * 10 ** 12

    const expired: ExpiredEvent = (state) => ({ id: randomUUID(), botId: state.botId, type: 'state_expired', payload: { stateId: state.id }, status: 'pending', dueAt: 0, createdAt: 0 })
    const key = (over: Partial<StateKey> = {}): StateKey => ({ botId, type: 'conversation', resourceId: randomUUID(), name: 'cart', ...over })
    const write = (mode: StateWrite['mode'], payload: Record<string, unknown>, now: number, over: Partial<StateWrite> = {}): StateWrite =>
      ({ mode, id: randomUUID(), payload: payload as StateWrite['payload'], defaultExpiry: null, now, ...over })
    let created = 0
    const event = (over: Partial<NewRuntimeEvent> = {}): NewRuntimeEvent =>
      ({ id: randomUUID(), botId, type: 't', payload: {}, status: 'pending', dueAt: 0, createdAt: ++created, ...over })
    const workflow = (over: Partial<NewWorkflow> = {}): NewWorkflow => ({
      id: randomUUID(), botId, name: 'w', status: 'pending', input: {}, parentWorkflowId: null, conversationId: null, userId: null,
      eventId: null, tags: {}, timeoutAt: 10 ** 15, createdAt: ++created, ...over,
    })
    /** Ends every waiting event due by `now` (the queue is shared by the tests). */
    const drain = async (now: number) => {
      for (let e; (e = await store.runtimeEvents.claimDue('drain', now, 1));) await store.runtimeEvents.finish(e.id, 'drain', { status: 'processed' }, now)
    }

    beforeAll(async () => {
      ;({ store, second, cleanup } = await factory())
      const fx = await seed(store)
      botId = fx.bot.id
      integrationId = fx.a.id
      otherBotId = (await seed(store)).bot.id
    })
    afterAll(async () => cleanup?.())

    describe('states', () => {
      it('declarations: stored per bot, the version moves forward', async () => {
        expect(await store.states.getDefinitions(botId)).toBeUndefined()
        const first = await store.states.setDefinitions(botId, { cart: { type: 'conversation', schema: {} } }, 1)
        const next = await second.states.setDefinitions(botId, { a: { type: 'bot', schema: {} } }, 2)
        expect(next.version).toBeGreaterThan(first.version)
        expect(await store.states.getDefinitions(botId)).toEqual({ botId, definitions: { a: { type: 'bot', schema: {} } }, version: next.version, updatedAt: 2 })
        expect(await store.states.getDefinitions(otherBotId)).toBeUndefined()
      })

      it('set creates then replaces; patch merges (nothing without a state); getOrSet keeps a live state', async () => {
        const now = later()
        const k = key()
        expect(await store.states.write(k, write('patch', { a: 1 }, now), expired)).toBeUndefined()
        const created = await store.states.write(k, write('set', { a: 1, b: 2 }, now), expired)
        expect(created).toMatchObject({ created: true, state: { ...k, payload: { a: 1, b: 2 }, expiry: null, expiresAt: null, createdAt: now, updatedAt: now } })
        const replaced = await store.states.write(k, write('set', { c: 3 }, now + 1), expired)
        expect(replaced).toMatchObject({ created: false, state: { id: created!.state.id, payload: { c: 3 }, createdAt: now, updatedAt: now + 1 } })
        const patched = await store.states.write(k, write('patch', { d: 4 }, now + 2), expired)
        expect(patched!.state.payload).toEqual({ c: 3, d: 4 })
        const kept = await store.states.write(k, write('getOrSet', { other: true }, now + 3), expired)
        expect(kept).toMatchObject({ created: false, state: { payload: { c: 3, d: 4 }, updatedAt: now + 2 } })
        expect(await store.states.get(k, now + 4)).toEqual(kept!.state)
        // Keys differ by bot, type, resource and name.
        expect(await store.states.get({ ...k, botId: otherBotId }, now)).toBeUndefined()
        expect(await store.states.get({ ...k, type: 'user' }, now)).toBeUndefined()
        expect(await store.states.get({ ...k, name: 'other' }, now)).toBeUndefined()
        expect(await store.states.delete(k, now + 5, expired)).toBe(true)
        expect(await store.states.delete(k, now + 5, expired)).toBe(false)
        expect(await store.states.get(k, now + 5)).toBeUndefined()
      })

      it('expiry: default for new states, kept on writes without one, invisible once passed; setExpiry from now or never', async () => {
        const now = later()
        const k = key()
        const created = await store.states.write(k, write('set', {}, now, { defaultExpiry: 1000 }), expired)
        expect(created!.state).toMatchObject({ expiry: 1000, expiresAt: now + 1000 })
        const rewritten = await store.states.write(k, write('set', { v: 2 }, now + 500, { defaultExpiry: 5 }), expired)
        expect(rewritten!.state).toMatchObject({ expiry: 1000, expiresAt: now + 1500 })
        expect(await store.states.get(k, now + 1499)).toBeDefined()
        expect(await store.states.get(k, now + 1500)).toBeUndefined()
        expect(await store.states.setExpiry(k, 60_000, now + 1500)).toBeUndefined()
        const k2 = key()
        await store.states.write(k2, write('set', {}, now, { expiry: 1000 }), expired)
        expect(await store.states.setExpiry(k2, null, now + 10)).toMatchObject({ expiry: null, expiresAt: null })
        expect(await store.states.setExpiry(k2, 2000, now + 20)).toMatchObject({ expiry: 2000, expiresAt: now + 2020 })
        await store.states.write(k2, write('set', {}, now + 30, { expiry: null }), expired)
        expect(await store.states.get(k2, now + 10 ** 9)).toMatchObject({ expiry: null })
      })

      it('expireDue removes each expired state once and queues its event, even with two sweepers at once', async () => {
        const now = later()
        const keys = Array.from({ length: 20 }, () => key())
        for (const k of keys) await store.states.write(k, write('set', {}, now, { expiry: 1000 }), expired)
        const swept = (await Promise.all([
          store.states.expireDue(now + 1000, 7, expired), second.states.expireDue(now + 1000, 7, expired),
          store.states.expireDue(now + 1000, 7, expired), second.states.expireDue(now + 1000, 7, expired),
        ])).flat()
        const more = await store.states.expireDue(now + 1000, 100, expired)
        const ids = [...swept, ...more].map((s) => s.resourceId).filter((id) => keys.some((k) => k.resourceId === id))
        expect(new Set(ids).size).toBe(ids.length)
        expect(ids.sort()).toEqual(keys.map((k) => k.resourceId).sort())
        const queued = (await store.runtimeEvents.list(botId, { type: 'state_expired' }, { limit: 100 })).items
        const stateIds = new Set([...swept, ...more].filter((s) => keys.some((k) => k.resourceId === s.resourceId)).map((s) => s.id))
        expect(queued.filter((e) => stateIds.has(e.payload.stateId as string))).toHaveLength(20)
        await drain(now + 1000)
      })

      it('a write finding its state expired expires it first (event queued) and starts a new one', async () => {
        const now = later()
        const k = key()
        const old = await store.states.write(k, write('set', { v: 1 }, now, { expiry: 1000 }), expired)
        const fresh = await store.states.write(k, write('getOrSet', { v: 2 }, now + 2000), expired)
        expect(fresh).toMatchObject({ created: true, state: { payload: { v: 2 }, expiry: null } })
        expect(fresh!.state.id).not.toBe(old!.state.id)
        const queued = (await store.runtimeEvents.list(botId, { type: 'state_expired' }, { limit: 100 })).items
        expect(queued.filter((e) => e.payload.stateId === old!.state.id)).toHaveLength(1)
        expect(await store.states.write(key(), write('patch', {}, now), expired)).toBeUndefined()
        await drain(now + 2000)
      })

      it('concurrent getOrSet on a new state: one creates it, the others get it', async () => {
        const now = later()
        const k = key()
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : store).states.write(k, write('getOrSet', { i }, now), expired)))
        expect(results.filter((r) => r!.created)).toHaveLength(1)
        expect(new Set(results.map((r) => r!.state.id)).size).toBe(1)
      })
    })

    describe('runtime events', () => {
      it('claims due events in due order; scheduled ones only once due; appended ones never', async () => {
        const now = later()
        const a = await store.runtimeEvents.insert(event({ dueAt: now - 10 }))
        const b = await store.runtimeEvents.insert(event({ status: 'scheduled', dueAt: now - 5 }))
        const c = await store.runtimeEvents.insert(event({ status: 'scheduled', dueAt: now + 1000 }))
        expect(b.status).toBe('scheduled')
        expect((await store.runtimeEvents.claimDue('w', now, 100))?.id).toBe(a.id)
        const claimedB = await store.runtimeEvents.claimDue('w', now, 100)
        expect(claimedB).toMatchObject({ id: b.id, leaseOwner: 'w', leaseUntil: now + 100, attempts: 1 })
        expect(await store.runtimeEvents.claimDue('w', now, 100)).toBeUndefined()
        // Appended to a conversation log: no longer claimable, still pending.
        expect(await store.runtimeEvents.finish(b.id, 'w', { status: 'pending', conversationSeq: 7, integrationId }, now)).toBe(true)
        expect(await store.runtimeEvents.get(botId, b.id)).toMatchObject({ status: 'pending', conversationSeq: 7, integrationId, leaseOwner: null })
        // a's lease expires: claimed again (attempt 2).
        expect(await store.runtimeEvents.claimDue('w2', now + 100, 100)).toMatchObject({ id: a.id, attempts: 2, leaseOwner: 'w2' })
        expect(await store.runtimeEvents.finish(a.id, 'w', { status: 'processed' }, now)).toBe(false)
        expect(await store.runtimeEvents.finish(a.id, 'w2', { status: 'failed', failureReason: 'boom' }, now + 150)).toBe(true)
        expect(await store.runtimeEvents.get(botId, a.id)).toMatchObject({ status: 'failed', failureReason: 'boom', processedAt: now + 150 })
        expect((await store.runtimeEvents.claimDue('w', now + 1000, 100))?.id).toBe(c.id)
        await store.runtimeEvents.extendLease(c.id, 'other', now + 10 ** 6)
        await store.runtimeEvents.extendLease(c.id, 'w', now + 1050)
        expect(await store.runtimeEvents.claimDue('w3', now + 1049, 100)).toBeUndefined()
        await store.runtimeEvents.release(c.id, 'w')
        expect((await store.runtimeEvents.claimDue('w3', now + 1000, 100))?.id).toBe(c.id)
        expect(await store.runtimeEvents.finish(c.id, 'w3', { status: 'ignored', failureReason: 'no code' }, now + 1000)).toBe(true)
        await drain(now + 1000)
      })

      it('an event appended to a conversation reads (and filters) as processed once the bot\'s cursor there passed it', async () => {
        const now = later()
        const conversationId = randomUUID()
        const owner = await store.createUser({ integrationId, id: randomUUID(), now })
        await store.createConversation(integrationId, conversationId, owner.id, now)
        const e = await store.runtimeEvents.insert(event({ dueAt: now, conversationId, type: 'appended' }))
        await store.runtimeEvents.claimDue('w', now, 100)
        await store.runtimeEvents.finish(e.id, 'w', { status: 'pending', conversationSeq: 3, integrationId }, now)
        expect((await store.runtimeEvents.get(botId, e.id))!.status).toBe('pending')
        await store.advanceBotCursor(integrationId, conversationId, 2)
        expect((await store.runtimeEvents.list(botId, { conversationId, status: 'pending' }, { limit: 10 })).items.map((x) => x.id)).toEqual([e.id])
        await store.advanceBotCursor(integrationId, conversationId, 3)
        expect((await second.runtimeEvents.get(botId, e.id))!.status).toBe('processed')
        expect((await store.runtimeEvents.list(botId, { conversationId, status: 'processed' }, { limit: 10 })).items.map((x) => x.id)).toEqual([e.id])
        expect((await store.runtimeEvents.list(botId, { conversationId, status: 'pending' }, { limit: 10 })).items).toEqual([])
      })

      it('listChatEvents: the conversation logs\' custom events not already runtime events, with their status, filtered and paged', async () => {
        const now = later()
        const owner = await store.createUser({ integrationId, id: randomUUID(), now })
        const conversationId = randomUUID()
        await store.createConversation(integrationId, conversationId, owner.id, now)
        const ids: string[] = []
        for (let i = 0; i < 3; i++) {
          const e = await store.appendEvent({ id: randomUUID(), integrationId, conversationId, userId: owner.id, isBot: false, payload: { i }, botSkip: i === 2, now: now + i })
          ids.push(e!.id)
        }
        // An event that is a runtime event too (appended by the Runtime API) is listed by `list` only.
        const runtime = await store.runtimeEvents.insert(event({ dueAt: now, conversationId }))
        await store.appendEvent({ id: runtime.id, integrationId, conversationId, userId: owner.id, isBot: false, payload: {}, now: now + 3 })
        await store.advanceBotCursor(integrationId, conversationId, 1)
        const all = await second.runtimeEvents.listChatEvents(botId, [integrationId], { conversationId }, { limit: 10 })
        expect(all.items.map((e) => [e.id, e.status, e.type])).toEqual([[ids[2], 'ignored', 'custom'], [ids[1], 'pending', 'custom'], [ids[0], 'processed', 'custom']])
        expect(all.items[2]).toMatchObject({ botId, payload: { i: 0 }, userId: owner.id, conversationId })
        const first = await store.runtimeEvents.listChatEvents(botId, [integrationId], { conversationId }, { limit: 2 })
        const rest = await store.runtimeEvents.listChatEvents(botId, [integrationId], { conversationId }, { limit: 2, after: first.next })
        expect([...first.items, ...rest.items].map((e) => e.id)).toEqual([ids[2], ids[1], ids[0]])
        expect((await store.runtimeEvents.listChatEvents(botId, [integrationId], { conversationId, status: 'pending' }, { limit: 10 })).items.map((e) => e.id)).toEqual([ids[1]])
        expect((await store.runtimeEvents.listChatEvents(botId, [integrationId], { conversationId, type: 'other' }, { limit: 10 })).items).toEqual([])
        expect((await store.runtimeEvents.listChatEvents(botId, [integrationId], { conversationId, status: 'scheduled' }, { limit: 10 })).items).toEqual([])
        expect((await store.runtimeEvents.listChatEvents(botId, [], { conversationId }, { limit: 10 })).items).toEqual([])
        await drain(now + 10)
      })

      it('an event inserted with a lease is its creator\'s until the lease ends', async () => {
        const now = later()
        const e = await store.runtimeEvents.insert(event({ dueAt: now, lease: { owner: 'creator', until: now + 500 } }))
        expect(await store.runtimeEvents.claimDue('w', now + 100, 100)).toBeUndefined()
        expect((await store.runtimeEvents.claimDue('w', now + 500, 100))?.id).toBe(e.id)
        await drain(now + 1000)
      })

      it('gives each due event to exactly one of many concurrent claimers (two pools on PostgreSQL)', async () => {
        const now = later()
        const ids = new Set<string>()
        for (let i = 0; i < 30; i++) ids.add((await store.runtimeEvents.insert(event({ dueAt: now }))).id)
        const claimed: string[] = []
        await Promise.all(Array.from({ length: 6 }, async (_, w) => {
          const on = w % 2 ? second : store
          for (let e; (e = await on.runtimeEvents.claimDue(`w${w}`, now, 60_000));) {
            claimed.push(e.id)
            await on.runtimeEvents.finish(e.id, `w${w}`, { status: 'processed' }, now)
          }
        }))
        expect(claimed.sort()).toEqual([...ids].sort())
      })

      it('cancel: only scheduled events, only the bot\'s; list filters and pages newest first', async () => {
        const now = later()
        const s = await store.runtimeEvents.insert(event({ status: 'scheduled', dueAt: now + 10 ** 6, type: 'cancel-me' }))
        expect(await store.runtimeEvents.cancel(otherBotId, s.id, now)).toBeUndefined()
        expect(await store.runtimeEvents.cancel(botId, s.id, now)).toBe(true)
        expect(await store.runtimeEvents.cancel(botId, s.id, now)).toBe(false)
        expect(await store.runtimeEvents.cancel(botId, randomUUID(), now)).toBeUndefined()
        expect(await store.runtimeEvents.claimDue('w', now + 10 ** 7, 100)).toBeUndefined()
        const type = `list-${now}`
        const ids = []
        for (let i = 0; i < 5; i++) ids.push((await store.runtimeEvents.insert(event({ type, status: 'scheduled', dueAt: now + 10 ** 9, conversationId: i % 2 ? 'c1' : 'c2', userId: 'u', workflowId: 'wf', messageId: 'm' }))).id)
        const first = await store.runtimeEvents.list(botId, { type }, { limit: 2 })
        const rest = await store.runtimeEvents.list(botId, { type }, { limit: 10, after: first.next })
        expect([...first.items, ...rest.items].map((e) => e.id)).toEqual([...ids].reverse())
        expect(rest.next).toBeUndefined()
        expect((await store.runtimeEvents.list(botId, { type, conversationId: 'c1' }, { limit: 10 })).items).toHaveLength(2)
        expect((await store.runtimeEvents.list(botId, { type, userId: 'u', workflowId: 'wf', messageId: 'm', status: 'scheduled' }, { limit: 10 })).items).toHaveLength(5)
        expect((await store.runtimeEvents.list(otherBotId, { type }, { limit: 10 })).items).toEqual([])
        for (const id of ids) await store.runtimeEvents.cancel(botId, id, now)
      })
    })

    describe('workflows', () => {
      it('create, get, update (tags set and removed, completedAt once finished), delete; another bot sees nothing', async () => {
        const w = await store.workflows.create(workflow({ tags: { a: '1', b: '2' }, input: { x: 1 } }))
        expect(w).toMatchObject({ status: 'pending', input: { x: 1 }, output: {}, tags: { a: '1', b: '2' }, completedAt: null, failureReason: null })
        expect(await store.workflows.get(otherBotId, w.id)).toBeUndefined()
        expect(await store.workflows.update(otherBotId, w.id, { status: 'completed' }, 5)).toBeUndefined()
        const u = await second.workflows.update(botId, w.id, { status: 'completed', output: { ok: true }, tags: { a: null, c: '3' } }, 5)
        expect(u).toMatchObject({ status: 'completed', output: { ok: true }, tags: { b: '2', c: '3' }, completedAt: 5, updatedAt: 5 })
        expect((await store.workflows.list(botId, { tags: { c: '3' } }, { limit: 10 })).items.map((x) => x.id)).toContain(w.id)
        expect((await store.workflows.list(botId, { tags: { a: '1' } }, { limit: 10 })).items.map((x) => x.id)).not.toContain(w.id)
        expect(await store.workflows.delete(otherBotId, w.id)).toBe(false)
        expect(await store.workflows.delete(botId, w.id)).toBe(true)
        expect(await store.workflows.get(botId, w.id)).toBeUndefined()
      })

      it('list filters and pages newest first', async () => {
        const name = `list-${randomUUID()}`
        const ids = []
        for (let i = 0; i < 5; i++) ids.push((await store.workflows.create(workflow({ name, status: i % 2 ? 'listening' : 'pending', conversationId: 'c', userId: i === 0 ? 'u0' : null, parentWorkflowId: 'p' }))).id)
        const first = await store.workflows.list(botId, { name }, { limit: 3 })
        const rest = await store.workflows.list(botId, { name }, { limit: 3, after: first.next })
        expect([...first.items, ...rest.items].map((w) => w.id)).toEqual([...ids].reverse())
        expect((await store.workflows.list(botId, { name, statuses: ['listening'] }, { limit: 10 })).items).toHaveLength(2)
        expect((await store.workflows.list(botId, { name, userId: 'u0', conversationId: 'c', parentWorkflowId: 'p' }, { limit: 10 })).items.map((w) => w.id)).toEqual([ids[0]])
      })

      it('getOrCreate: one winner among concurrent callers; a match by tags and statuses', async () => {
        const name = `goc-${randomUUID()}`
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : store).workflows.getOrCreate(workflow({ name, tags: { k: 'v' } }), { name, tags: { k: 'v' } })))
        expect(results.filter((r) => r.created)).toHaveLength(1)
        expect(new Set(results.map((r) => r.workflow.id)).size).toBe(1)
        const finished = await store.workflows.getOrCreate(workflow({ name }), { name, tags: { k: 'v' }, statuses: ['completed'] })
        expect(finished.created).toBe(true)
      })

      it('timeOutDue: active workflows past timeoutAt become timedout; finished ones stay', async () => {
        const now = later()
        const due = await store.workflows.create(workflow({ status: 'listening', timeoutAt: now - 1 }))
        const done = await store.workflows.create(workflow({ timeoutAt: now - 1 }))
        await store.workflows.update(botId, done.id, { status: 'completed' }, now - 1)
        const notYet = await store.workflows.create(workflow({ timeoutAt: now + 1000 }))
        expect(await store.workflows.timeOutDue(now, 100)).toBeGreaterThanOrEqual(1)
        expect(await store.workflows.get(botId, due.id)).toMatchObject({ status: 'timedout', completedAt: now })
        expect((await store.workflows.get(botId, done.id))!.status).toBe('completed')
        expect((await store.workflows.get(botId, notYet.id))!.status).toBe('pending')
      })
    })

    describe('telemetry', () => {
      it('analytics add up per bot, name and day', async () => {
        await store.telemetry.addAnalytics(botId, 'n', '2026-01-01', 2, 1)
        await second.telemetry.addAnalytics(botId, 'n', '2026-01-01', 3, 2)
        await store.telemetry.addAnalytics(botId, 'n', '2026-01-02', 1, 3)
        await store.telemetry.addAnalytics(otherBotId, 'n', '2026-01-01', 7, 3)
        const { items } = await store.telemetry.listAnalytics(botId, { limit: 10 })
        expect(items.map((r) => [r.day, r.name, r.count])).toEqual([['2026-01-02', 'n', 1], ['2026-01-01', 'n', 5]])
      })

      it('observations: the newest `keep` per bot stay; the same id replaces', async () => {
        for (let i = 0; i < 6; i++) await store.telemetry.addObservation({ id: `o${i}`, botId, name: 'x', data: { i }, refs: {}, createdAt: 100 + i }, 4)
        await store.telemetry.addObservation({ id: 'o0', botId: otherBotId, name: 'x', data: {}, refs: { userId: 'u' }, createdAt: 1 }, 4)
        expect((await store.telemetry.listObservations(botId, { limit: 10 })).items.map((o) => o.id)).toEqual(['o5', 'o4', 'o3', 'o2'])
        await store.telemetry.addObservation({ id: 'o5', botId, name: 'x', data: { again: true }, refs: {}, createdAt: 200 }, 4)
        const items = (await store.telemetry.listObservations(botId, { limit: 10 })).items
        expect(items[0]).toMatchObject({ id: 'o5', data: { again: true } })
        expect(items).toHaveLength(4)
        expect((await store.telemetry.listObservations(otherBotId, { limit: 10 })).items).toEqual([expect.objectContaining({ id: 'o0', refs: { userId: 'u' } })])
      })

      it('registrations: set, patched (null removes the identifier), per integration', async () => {
        expect(await store.telemetry.getRegistration(integrationId)).toBeUndefined()
        await store.telemetry.setRegistration(integrationId, { identifier: 'a', scheduleRegisterCall: 'daily', sandboxIdentifiers: { x: 1 } }, 1)
        const next = await second.telemetry.setRegistration(integrationId, { identifier: null }, 2)
        expect(next).toEqual({ integrationId, identifier: null, scheduleRegisterCall: 'daily', sandboxIdentifiers: { x: 1 }, updatedAt: 2 })
        expect(await store.telemetry.getRegistration(integrationId)).toEqual(next)
      })
    })
  })
}
