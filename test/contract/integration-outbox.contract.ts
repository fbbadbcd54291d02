/**
 * Contract of IntegrationOutboxStore (src/store/integration-outbox-store.ts), run against each engine: a
 * conversation of an installed integration is behind while its log goes past its delivery cursor (cursor 0 before
 * its first claim), one owner at a time holds its lease (on PostgreSQL two connection pools, as two instances would
 * have, race for one claim and exactly one wins), an expired lease is taken over and the former owner can then
 * neither renew nor move the cursor, the cursor never moves back, release frees the lease at once, and the row goes
 * with its conversation. Conversations of built-in integrations (no installation) are never behind.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import { newMessage, seed, type Fixture } from './store.contract.js'

/** `second` is another handle on the same database (another instance's pool), or the same store. */
export type IntegrationOutboxStoreFactory = () => Promise<{ store: Store; second: Store; cleanup: () => Promise<void> }>

export function describeIntegrationOutboxContract(name: string, factory: IntegrationOutboxStoreFactory): void {
  describe(`IntegrationOutboxStore contract: ${name}`, () => {
    let store: Store
    let second: Store
    let cleanup: () => Promise<void>
    let fx: Fixture
    const now = 5_000_000
    const TTL = 10_000

    /** A conversation of the installed integration `b` with `messages` messages in its log (last_seq = messages). */
    const conversation = async (messages = 1, integrationId = fx.b.id) => {
      const id = `conv-${randomUUID()}`
      const user = await store.createUser({ integrationId, id: `user-${randomUUID()}`, now })
      await store.createConversation(integrationId, id, user.id, now)
      for (let i = 0; i < messages; i++) await store.appendMessage(newMessage(integrationId, id, user.id, now + i))
      return id
    }
    const behind = async (at = now) => (await store.integrationOutbox.behind(at, 1000)).filter((c) => c.integrationId === fx.b.id || c.integrationId === fx.a.id).map((c) => c.conversationId)

    beforeAll(async () => {
      ;({ store, second, cleanup } = await factory())
      fx = await seed(store)
      // Integration `b` runs a definition (an installation); `a` stays built-in.
      const definitionId = randomUUID()
      await store.integrations.createDefinition({
        id: definitionId, workspaceId: fx.workspace.id, name: 'outside', version: '1.0.0', url: 'http://127.0.0.1:1/', dev: false,
        signingSecret: 's', definition: {}, createdAt: now, updatedAt: now,
      })
      await store.integrations.setInstallation({ integrationId: fx.b.id, definitionId, configurationType: null })
    })
    afterAll(async () => cleanup?.())

    it('behind: an installed integration\'s conversation with messages past its cursor (0 before any claim); never a built-in one\'s', async () => {
      const id = await conversation(2)
      const builtIn = await conversation(2, fx.a.id)
      const empty = await conversation(0)
      const list = await behind()
      expect(list).toContain(id)
      expect(list).not.toContain(builtIn)
      expect(list).not.toContain(empty)
      expect(await store.integrationOutbox.cursor(fx.b.id, id)).toEqual({ deliveredSeq: 0, lastSeq: 2 })
      expect(await store.integrationOutbox.cursor(fx.b.id, 'no-such-conversation')).toBeUndefined()
    })

    it('claim, advance, release: the cursor moves forward only; caught up is no longer behind', async () => {
      const id = await conversation(3)
      expect(await store.integrationOutbox.claim(fx.b.id, id, 'me', now, TTL)).toEqual({ deliveredSeq: 0, lastSeq: 3 })
      // Held: not the sweep's work while the lease lasts.
      expect(await behind()).not.toContain(id)
      expect(await store.integrationOutbox.advance(fx.b.id, id, 'me', 2)).toBe(true)
      expect(await store.integrationOutbox.advance(fx.b.id, id, 'me', 1)).toBe(true)
      expect(await store.integrationOutbox.cursor(fx.b.id, id)).toEqual({ deliveredSeq: 2, lastSeq: 3 })
      expect(await store.integrationOutbox.release(fx.b.id, id, 'me')).toEqual({ deliveredSeq: 2, lastSeq: 3 })
      expect(await behind()).toContain(id)
      expect(await store.integrationOutbox.claim(fx.b.id, id, 'me', now, TTL)).toEqual({ deliveredSeq: 2, lastSeq: 3 })
      await store.integrationOutbox.advance(fx.b.id, id, 'me', 3)
      await store.integrationOutbox.release(fx.b.id, id, 'me')
      expect(await behind()).not.toContain(id)
      // A new message: behind again, from where it was.
      const user = await store.createUser({ integrationId: fx.b.id, id: `user-${randomUUID()}`, now })
      await store.appendMessage(newMessage(fx.b.id, id, user.id, now + 10))
      expect(await behind()).toContain(id)
      expect(await store.integrationOutbox.cursor(fx.b.id, id)).toEqual({ deliveredSeq: 3, lastSeq: 4 })
    })

    it('one owner at a time: a held lease refuses others until it expires; the former owner then cannot renew or advance', async () => {
      const id = await conversation(2)
      expect(await store.integrationOutbox.claim(fx.b.id, id, 'first', now, TTL)).toBeDefined()
      expect(await second.integrationOutbox.claim(fx.b.id, id, 'second', now + 1, TTL)).toBeUndefined()
      expect(await store.integrationOutbox.renew(fx.b.id, id, 'first', now + 2 * TTL)).toBe(true)
      expect(await second.integrationOutbox.claim(fx.b.id, id, 'second', now + TTL + 1, TTL)).toBeUndefined()
      // Expired (a dead instance): behind again, and taken over.
      expect(await behind(now + 2 * TTL + 1)).toContain(id)
      expect(await second.integrationOutbox.claim(fx.b.id, id, 'second', now + 2 * TTL + 1, TTL)).toEqual({ deliveredSeq: 0, lastSeq: 2 })
      expect(await store.integrationOutbox.renew(fx.b.id, id, 'first', now + 5 * TTL)).toBe(false)
      expect(await store.integrationOutbox.advance(fx.b.id, id, 'first', 2)).toBe(false)
      expect(await store.integrationOutbox.cursor(fx.b.id, id)).toEqual({ deliveredSeq: 0, lastSeq: 2 })
      // Another owner's release changes nothing.
      await store.integrationOutbox.release(fx.b.id, id, 'first')
      expect(await store.integrationOutbox.claim(fx.b.id, id, 'third', now + 2 * TTL + 2, TTL)).toBeUndefined()
      expect(await second.integrationOutbox.advance(fx.b.id, id, 'second', 2)).toBe(true)
    })

    it('concurrent first claims of one conversation from two instances: exactly one wins', async () => {
      for (let round = 0; round < 5; round++) {
        const id = await conversation(1)
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? second : store).integrationOutbox.claim(fx.b.id, id, `owner-${i}`, now, TTL)))
        expect(results.filter((r) => r !== undefined)).toHaveLength(1)
      }
    })

    it('a conversation that is gone: claim answers undefined; its row goes with it', async () => {
      expect(await store.integrationOutbox.claim(fx.b.id, 'gone', 'me', now, TTL)).toBeUndefined()
      const id = await conversation(1)
      await store.integrationOutbox.claim(fx.b.id, id, 'me', now, TTL)
      await store.deleteConversation(fx.b.id, id)
      expect(await store.integrationOutbox.cursor(fx.b.id, id)).toBeUndefined()
      expect(await behind()).not.toContain(id)
      expect(await store.integrationOutbox.claim(fx.b.id, id, 'me', now, TTL)).toBeUndefined()
    })
  })
}
