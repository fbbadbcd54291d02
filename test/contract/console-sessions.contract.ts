/**
 * Contract of ConsoleSessionStore (src/store/console-session-store.ts), run against each engine: a row is found by
 * kind and digest until it expires, a one-time link is consumed at most once (also by concurrent callers, on
 * PostgreSQL from two pools), sign-out deletes, expired rows are swept, and deleting the account deletes its rows;
 * rows are deleted with the personal access token they were made from; an account's sessions are listed, revoked
 * by public id (its own only) and all at once.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/store.js'
import type { ConsoleSessionRow } from '../../src/store/console-session-store.js'

export type ConsoleSessionStoreFactory = () => Promise<{ store: Store; second: Store; cleanup: () => Promise<void> }>

export function describeConsoleSessionContract(name: string, factory: ConsoleSessionStoreFactory): void {
  describe(`ConsoleSessionStore contract: ${name}`, () => {
    let store: Store
    let second: Store
    let cleanup: () => Promise<void>
    let accountId: string
    const now = 1_800_000_000_000

    beforeAll(async () => {
      ;({ store, second, cleanup } = await factory())
      accountId = `acc_${randomUUID()}`
      await store.createAccount({ id: accountId, email: `${accountId}@example.test`, displayName: 'Console contract', createdAt: now, updatedAt: now })
    })
    afterAll(async () => cleanup?.())

    const row = (over: Partial<ConsoleSessionRow> = {}): ConsoleSessionRow => ({
      tokenHash: randomUUID(), kind: 'session', accountId, createdAt: now, expiresAt: now + 60_000, id: randomUUID(), accessTokenId: null, ...over,
    })

    it('finds a live row by kind and digest, not after it expires, not under another kind', async () => {
      const r = row()
      await store.consoleSessions.create(r)
      expect(await store.consoleSessions.find('session', r.tokenHash, now)).toEqual(r)
      expect(await store.consoleSessions.find('link', r.tokenHash, now)).toBeUndefined()
      expect(await store.consoleSessions.find('session', r.tokenHash, r.expiresAt)).toBeUndefined()
      expect(await store.consoleSessions.find('session', 'nope', now)).toBeUndefined()
    })

    it('consumes a one-time link once, even when two callers race', async () => {
      const r = row({ kind: 'link' })
      await store.consoleSessions.create(r)
      const results = await Promise.all([
        store.consoleSessions.consume('link', r.tokenHash, now),
        second.consoleSessions.consume('link', r.tokenHash, now),
        store.consoleSessions.consume('link', r.tokenHash, now),
      ])
      expect(results.filter((x) => x !== undefined)).toEqual([r])
      expect(await store.consoleSessions.consume('link', r.tokenHash, now)).toBeUndefined()
    })

    it('does not answer an expired link (and uses it up)', async () => {
      const r = row({ kind: 'link', expiresAt: now - 1 })
      await store.consoleSessions.create(r)
      expect(await store.consoleSessions.consume('link', r.tokenHash, now)).toBeUndefined()
      expect(await store.consoleSessions.find('link', r.tokenHash, 0)).toBeUndefined()
    })

    it('deletes on sign-out and sweeps expired rows', async () => {
      const live = row()
      const old = row({ expiresAt: now - 10 })
      await store.consoleSessions.create(live)
      await store.consoleSessions.create(old)
      expect(await store.consoleSessions.delete(live.tokenHash)).toBe(true)
      expect(await store.consoleSessions.delete(live.tokenHash)).toBe(false)
      expect(await store.consoleSessions.deleteExpired(now)).toBeGreaterThanOrEqual(1)
      expect(await store.consoleSessions.find('session', old.tokenHash, 0)).toBeUndefined()
    })

    it('deletes the rows made from a personal access token with that token (sessions and links), and no other', async () => {
      const tokenId = randomUUID()
      await store.createAccessToken({ id: tokenId, accountId, note: 'contract', createdAt: now, tokenHash: randomUUID() })
      const session = row({ accessTokenId: tokenId })
      const link = row({ kind: 'link', accessTokenId: tokenId })
      const unrelated = row()
      for (const r of [session, link, unrelated]) await store.consoleSessions.create(r)
      expect(await store.consoleSessions.find('session', session.tokenHash, now)).toEqual(session)
      expect(await store.deleteAccessToken(accountId, tokenId)).toBe(true)
      expect(await store.consoleSessions.find('session', session.tokenHash, now)).toBeUndefined()
      expect(await store.consoleSessions.find('link', link.tokenHash, now)).toBeUndefined()
      expect(await store.consoleSessions.find('session', unrelated.tokenHash, now)).toEqual(unrelated)
      await store.consoleSessions.delete(unrelated.tokenHash)
    })

    it('lists an account\'s live sessions newest first, revokes one by id (its own only) and all at once', async () => {
      const [mine, other] = [`acc_${randomUUID()}`, `acc_${randomUUID()}`]
      for (const id of [mine, other]) await store.createAccount({ id, email: `${id}@example.test`, displayName: 'Listed', createdAt: now, updatedAt: now })
      const older = row({ accountId: mine, createdAt: now - 5 })
      const newer = row({ accountId: mine })
      const expired = row({ accountId: mine, expiresAt: now - 1 })
      const link = row({ accountId: mine, kind: 'link' })
      const theirs = row({ accountId: other })
      for (const r of [older, newer, expired, link, theirs]) await store.consoleSessions.create(r)
      expect((await store.consoleSessions.listSessions(mine, now)).map((r) => r.id)).toEqual([newer.id, older.id])
      expect(await store.consoleSessions.deleteSession(mine, theirs.id)).toBe(false)
      expect(await store.consoleSessions.deleteSession(mine, link.id)).toBe(false)
      expect(await store.consoleSessions.deleteSession(mine, older.id)).toBe(true)
      expect((await store.consoleSessions.listSessions(mine, now)).map((r) => r.id)).toEqual([newer.id])
      expect(await store.consoleSessions.deleteForAccount(mine)).toBe(2)
      expect(await store.consoleSessions.find('link', link.tokenHash, now)).toBeUndefined()
      expect(await store.consoleSessions.listSessions(mine, now)).toEqual([])
      expect((await store.consoleSessions.listSessions(other, now)).map((r) => r.id)).toEqual([theirs.id])
    })

    it('refuses a row of an unknown account', async () => {
      await expect(store.consoleSessions.create(row({ accountId: 'acc_missing' }))).rejects.toThrow()
    })
  })
}
