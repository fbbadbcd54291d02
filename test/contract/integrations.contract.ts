/**
 * Contract of IntegrationStore (src/store/integration-store.ts), run against each engine: definitions
 * unique per workspace, name and version, found by name (latest) and listed per workspace in pages;
 * API keys found by digest and deleted per definition; installations linked to a bot's integration
 * and gone with it; logs in time order with filters and pages.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { IntegrationDefinitionRow } from '../../src/store/integration-store.js'
import { UniqueViolation, type Store } from '../../src/store/store.js'
import { seed, type Fixture } from './store.contract.js'

export type IntegrationStoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>

export function describeIntegrationContract(name: string, factory: IntegrationStoreFactory): void {
  describe(`IntegrationStore contract: ${name}`, () => {
    let store: Store
    let cleanup: () => Promise<void>
    let fx: Fixture
    let other: Fixture
    let at = 1_000_000
    const definition = (workspaceId: string, over: Partial<IntegrationDefinitionRow> = {}): IntegrationDefinitionRow => ({
      id: randomUUID(), workspaceId, name: 'telegram', version: '1.0.0', url: 'http://127.0.0.1:1/', dev: false,
      signingSecret: 'secret', definition: { channels: { channel: { messages: { text: { schema: {} } } } } }, createdAt: ++at, updatedAt: at,
      visibility: 'private', ...over,
    })

    beforeAll(async () => {
      ;({ store, cleanup } = await factory())
      fx = await seed(store)
      other = await seed(store)
    })
    afterAll(async () => cleanup())

    it('definitionVersions: a workspace\'s versions of a name, or (no workspace) the public and unlisted ones of every workspace', async () => {
      const name = `hub-${randomUUID()}`
      const mine = definition(fx.workspace.id, { name })
      const published = definition(other.workspace.id, { name, version: '1.1.0', visibility: 'public' })
      const unlisted = definition(other.workspace.id, { name, version: '1.2.0', visibility: 'unlisted' })
      for (const d of [mine, published, unlisted]) await store.integrations.createDefinition(d)
      expect((await store.integrations.definitionVersions(name, fx.workspace.id)).map((d) => d.id)).toEqual([mine.id])
      expect((await store.integrations.definitionVersions(name, undefined)).map((d) => d.id)).toEqual([published.id, unlisted.id])
      expect((await store.integrations.updateDefinition(mine.id, { visibility: 'public' }, ++at))?.visibility).toBe('public')
      expect((await store.integrations.definitionVersions(name, undefined)).map((d) => d.id)).toEqual([mine.id, published.id, unlisted.id])
    })

    it('stores a definition, refuses the same name and version twice in a workspace, allows it in another', async () => {
      const d = definition(fx.workspace.id)
      await store.integrations.createDefinition(d)
      expect(await store.integrations.getDefinition(d.id)).toEqual(d)
      await expect(store.integrations.createDefinition(definition(fx.workspace.id))).rejects.toBeInstanceOf(UniqueViolation)
      await store.integrations.createDefinition(definition(other.workspace.id))
      const v2 = definition(fx.workspace.id, { version: '2.0.0' })
      await store.integrations.createDefinition(v2)
      expect((await store.integrations.findDefinition(fx.workspace.id, 'telegram'))?.id).toBe(v2.id)
      expect((await store.integrations.findDefinition(fx.workspace.id, 'telegram', '1.0.0'))?.id).toBe(d.id)
      expect(await store.integrations.findDefinition(fx.workspace.id, 'telegram', '3.0.0')).toBeUndefined()
    })

    it('lists a workspace\'s definitions only, in pages, with filters', async () => {
      const ws = (await seed(store)).workspace.id
      const made = []
      for (let i = 0; i < 5; i++) {
        const d = definition(ws, { name: `n${i}`, dev: i % 2 === 0 })
        await store.integrations.createDefinition(d)
        made.push(d.id)
      }
      const first = await store.integrations.listDefinitions(ws, {}, { limit: 3 })
      expect(first.items).toHaveLength(3)
      const second = await store.integrations.listDefinitions(ws, {}, { limit: 3, after: first.next })
      expect(second.next).toBeUndefined()
      expect([...first.items, ...second.items].map((d) => d.id).sort()).toEqual([...made].sort())
      expect((await store.integrations.listDefinitions(ws, { dev: true }, { limit: 10 })).items).toHaveLength(3)
      expect((await store.integrations.listDefinitions(ws, { name: 'n1' }, { limit: 10 })).items.map((d) => d.name)).toEqual(['n1'])
    })

    it('updates and deletes a definition; its keys, installations and logs go with it', async () => {
      const d = definition(fx.workspace.id, { name: 'to-delete' })
      await store.integrations.createDefinition(d)
      const updated = await store.integrations.updateDefinition(d.id, { url: null, dev: true, definition: { title: 'T' } }, ++at)
      expect(updated).toMatchObject({ url: null, dev: true, definition: { title: 'T' }, updatedAt: at })
      expect(await store.integrations.updateDefinition(randomUUID(), { dev: true }, at)).toBeUndefined()
      await store.integrations.createApiKey({ id: randomUUID(), definitionId: d.id, note: '', createdAt: at, tokenHash: `h-${d.id}` })
      await store.integrations.setInstallation({ integrationId: fx.b.id, definitionId: d.id, configurationType: null })
      await store.integrations.appendLogs([{ id: randomUUID(), definitionId: d.id, botId: fx.bot.id, at, level: 'info', message: 'x', conversationId: null }])
      expect(await store.integrations.countInstallations(d.id)).toBe(1)
      expect(await store.integrations.deleteDefinition(d.id)).toBe(true)
      expect(await store.integrations.deleteDefinition(d.id)).toBe(false)
      expect(await store.integrations.findApiKeyByHash(`h-${d.id}`)).toBeUndefined()
      expect(await store.integrations.installationsOf([fx.b.id])).toEqual([])
    })

    it('finds an API key by its digest; deletes it only through its own definition', async () => {
      const d = definition(fx.workspace.id, { name: 'keys' })
      const e = definition(fx.workspace.id, { name: 'keys-other' })
      await store.integrations.createDefinition(d)
      await store.integrations.createDefinition(e)
      const key = { id: randomUUID(), definitionId: d.id, note: 'n', createdAt: ++at }
      await store.integrations.createApiKey({ ...key, tokenHash: `digest-${key.id}` })
      expect(await store.integrations.findApiKeyByHash(`digest-${key.id}`)).toEqual(key)
      expect(await store.integrations.listApiKeys(d.id)).toEqual([key])
      expect(await store.integrations.listApiKeys(e.id)).toEqual([])
      expect(await store.integrations.deleteApiKey(e.id, key.id)).toBe(false)
      expect(await store.integrations.deleteApiKey(d.id, key.id)).toBe(true)
      expect(await store.integrations.findApiKeyByHash(`digest-${key.id}`)).toBeUndefined()
    })

    it('links an installation, replaces its link, and drops it with the bot\'s integration', async () => {
      const d = definition(fx.workspace.id, { name: 'inst' })
      const e = definition(fx.workspace.id, { name: 'inst2' })
      await store.integrations.createDefinition(d)
      await store.integrations.createDefinition(e)
      const bot = await seed(store)
      await store.integrations.setInstallation({ integrationId: bot.b.id, definitionId: d.id, configurationType: null })
      await store.integrations.setInstallation({ integrationId: bot.b.id, definitionId: e.id, configurationType: 'manual' })
      expect(await store.integrations.installationsOf([bot.a.id, bot.b.id])).toEqual([{ integrationId: bot.b.id, definitionId: e.id, configurationType: 'manual', disabledChannels: [], status: 'registered', statusReason: null }])
      // disabledChannels: set, kept when a link omits them, replaced when given.
      await store.integrations.setInstallation({ integrationId: bot.b.id, definitionId: e.id, configurationType: 'manual', disabledChannels: ['sms', 'group'] })
      await store.integrations.setInstallation({ integrationId: bot.b.id, definitionId: e.id, configurationType: null })
      expect(await store.integrations.installationsOf([bot.b.id])).toEqual([{ integrationId: bot.b.id, definitionId: e.id, configurationType: null, disabledChannels: ['sms', 'group'], status: 'registered', statusReason: null }])
      await store.integrations.setInstallation({ integrationId: bot.b.id, definitionId: e.id, configurationType: null, disabledChannels: [] })
      expect((await store.integrations.installationsOf([bot.b.id]))[0]!.disabledChannels).toEqual([])
      expect(await store.integrations.countInstallations(d.id)).toBe(0)
      await store.deleteBot(bot.bot.id)
      expect(await store.integrations.countInstallations(e.id)).toBe(0)
    })

    it('records the outcome of an installation\'s register: registration_failed with its reason, then registered again', async () => {
      const d = definition(fx.workspace.id, { name: 'inst-status' })
      await store.integrations.createDefinition(d)
      const bot = await seed(store)
      await store.integrations.setInstallation({ integrationId: bot.b.id, definitionId: d.id, configurationType: null })
      await store.integrations.setInstallationStatus(bot.b.id, 'registration_failed', 'register answered 400 (Runtime: bad token)')
      expect(await store.integrations.installationsOf([bot.b.id])).toMatchObject([{ status: 'registration_failed', statusReason: 'register answered 400 (Runtime: bad token)' }])
      await store.integrations.setInstallationStatus(bot.b.id, 'registered', null)
      expect(await store.integrations.installationsOf([bot.b.id])).toMatchObject([{ status: 'registered', statusReason: null }])
    })

    it('keeps a definition\'s secret values apart (set, replaced, removed), and drops them with it', async () => {
      const d = definition(fx.workspace.id, { name: 'secrets' })
      const e = definition(fx.workspace.id, { name: 'secrets-other' })
      await store.integrations.createDefinition(d)
      await store.integrations.createDefinition(e)
      expect(await store.integrations.getSecrets(d.id)).toEqual({})
      await store.integrations.setSecrets(d.id, { API_KEY: 'one', OTHER: 'two' })
      await store.integrations.setSecrets(e.id, { API_KEY: 'not-d' })
      await store.integrations.setSecrets(d.id, { API_KEY: 'replaced', OTHER: null, MISSING: null })
      expect(await store.integrations.getSecrets(d.id)).toEqual({ API_KEY: 'replaced' })
      expect(await store.integrations.getSecrets(e.id)).toEqual({ API_KEY: 'not-d' })
      await store.integrations.deleteDefinition(d.id)
      expect(await store.integrations.getSecrets(d.id)).toEqual({})
    })

    it('lists logs in time order, filtered and paged', async () => {
      const d = definition(fx.workspace.id, { name: 'logs' })
      await store.integrations.createDefinition(d)
      const rows = [3, 1, 2, 4].map((n) => ({ id: randomUUID(), definitionId: d.id, botId: fx.bot.id, at: n * 1000, level: n === 4 ? 'error' : 'info', message: `m${n}`, conversationId: n === 2 ? 'c' : null }))
      await store.integrations.appendLogs(rows)
      const page = await store.integrations.listLogs(d.id, {}, { limit: 2 })
      expect(page.items.map((l) => l.message)).toEqual(['m1', 'm2'])
      const rest = await store.integrations.listLogs(d.id, {}, { limit: 2, after: page.next })
      expect(rest.items.map((l) => l.message)).toEqual(['m3', 'm4'])
      expect((await store.integrations.listLogs(d.id, { level: 'error' }, { limit: 10 })).items.map((l) => l.message)).toEqual(['m4'])
      expect((await store.integrations.listLogs(d.id, { from: 2000, to: 3000 }, { limit: 10 })).items.map((l) => l.message)).toEqual(['m2', 'm3'])
      expect((await store.integrations.listLogs(d.id, { conversationId: 'c' }, { limit: 10 })).items.map((l) => l.message)).toEqual(['m2'])
    })
  })
}
