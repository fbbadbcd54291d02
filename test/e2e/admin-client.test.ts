/**
 * Every Admin API operation through the official `@botpress/client@1.45.0` over real HTTP:
 * account and personal access tokens, workspaces, members, bots (listing with paging, sorting and
 * filters; the chat webhook as seen by `@botpress/chat`), bot API keys, and typed errors.
 */
import * as chat from '@botpress/chat'
import {
  AlreadyExistsError,
  Client,
  ForbiddenError,
  InvalidPayloadError,
  InvalidQueryError,
  ResourceNotFoundError,
  UnauthorizedError,
  isApiError,
} from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { ISO_Z } from '../helpers/formats.js'
import { freePort } from '../helpers/ports.js'
import { setTimeout as sleep } from 'node:timers/promises'

let seq = 0
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`
const freshEmail = (prefix: string) => `${unique(prefix)}@example.com`

/**
 * Parley on a real socket whose configured public URL is its real address, so that the
 * `webhookUrl`s it returns are reachable. (`startParley({ listen: true })` builds the app before it
 * knows its port, so the URLs it returns say `:0`.)
 */
async function startListening(): Promise<Harness> {
  const port = await freePort()
  const h = await startParley({ config: { publicUrl: `http://127.0.0.1:${port}` } })
  await h.app.listen({ port, host: '127.0.0.1' })
  return h
}

/** The thrown value of a promise that must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected the call to fail')
}

/** A typed error from @botpress/client whose type/code match the HTTP status Parley sent. */
async function expectApiError(promise: Promise<unknown>, cls: new (...args: never[]) => Error, type: string, code: number): Promise<void> {
  const err = await rejection(promise)
  expect(err).toBeInstanceOf(cls)
  expect(isApiError(err)).toBe(true)
  const e = err as { type: string; code: number; id: string; message: string }
  expect(e.type).toBe(type)
  expect(e.code).toBe(code)
  expect(e.id).toMatch(/^req_/)
  expect(e.message.length).toBeGreaterThan(0)
}

describe('e2e: Admin API through @botpress/client', () => {
  let h: Harness
  let client: Client
  let accountId: string

  const clientFor = (token: string, workspaceId?: string) =>
    new Client({ apiUrl: h.baseUrl, token, ...(workspaceId !== undefined && { workspaceId }) })

  /** The member's first token, which Parley returns in `pat` (not declared by the client's types). */
  const patOf = (member: unknown) => (member as { pat?: { id: string; value: string } }).pat

  beforeAll(async () => {
    h = await startListening()
    client = clientFor(h.credentials.token, h.credentials.workspaceId)
    accountId = (await client.getAccount({})).account.id
  })
  afterAll(async () => h?.close())

  describe('account and personal access tokens', () => {
    it('getAccount returns the owner\'s account', async () => {
      const { account } = await client.getAccount({})
      expect(account).toEqual({ id: accountId, email: 'owner@localhost', displayName: 'Owner', emailVerified: false, createdAt: expect.stringMatching(ISO_Z) })
    })

    it('createPersonalAccessToken → usable token shown once; listPersonalAccessTokens has no values; deletePersonalAccessToken → 401', async () => {
      const { pat } = await client.createPersonalAccessToken({ note: 'e2e' })
      expect(pat).toEqual({ id: expect.any(String), createdAt: expect.stringMatching(ISO_Z), note: 'e2e', value: expect.stringMatching(/^pat_/) })
      const second = clientFor(pat.value, h.credentials.workspaceId)
      expect((await second.getAccount({})).account.id).toBe(accountId)
      expect((await second.listBots({})).bots.length).toBeGreaterThan(0)

      const { pats } = await client.listPersonalAccessTokens({})
      expect(pats).toContainEqual({ id: pat.id, createdAt: pat.createdAt, note: 'e2e' })
      for (const p of pats) expect(Object.keys(p).sort()).toEqual(['createdAt', 'id', 'note'])
      expect(JSON.stringify(pats)).not.toContain(pat.value)

      expect(await client.deletePersonalAccessToken({ id: pat.id })).toEqual({})
      await expectApiError(second.getAccount({}), UnauthorizedError, 'Unauthorized', 401)
      await expectApiError(second.listBots({}), UnauthorizedError, 'Unauthorized', 401)
      expect((await client.listPersonalAccessTokens({})).pats.map((p) => p.id)).not.toContain(pat.id)
      await expectApiError(client.deletePersonalAccessToken({ id: pat.id }), ResourceNotFoundError, 'ResourceNotFound', 404)
    })
  })

  describe('workspaces', () => {
    it('createWorkspace makes the creator owner; get/list/update/deleteWorkspace', async () => {
      const created = await client.createWorkspace({ name: 'E2E workspace' })
      expect(created).toMatchObject({ name: 'E2E workspace', ownerId: accountId, botCount: 0, createdAt: expect.stringMatching(ISO_Z) })
      const inNew = clientFor(h.credentials.token, created.id)
      expect((await inNew.getWorkspaceMember({})).role).toBe('owner')

      expect(await client.getWorkspace({ id: created.id })).toEqual(created)
      const { workspaces } = await client.listWorkspaces({})
      expect(workspaces.map((w) => w.id)).toEqual(expect.arrayContaining([h.credentials.workspaceId, created.id]))
      const collected = await client.list.workspaces({ pageSize: 1 }).collect()
      expect(collected.map((w) => w.id)).toEqual(workspaces.map((w) => w.id))

      await sleep(3)
      const updated = await client.updateWorkspace({ id: created.id, name: 'Renamed' })
      expect(updated).toMatchObject({ id: created.id, name: 'Renamed', createdAt: created.createdAt })
      expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt))
      expect((await client.getWorkspace({ id: created.id })).name).toBe('Renamed')

      expect(await client.deleteWorkspace({ id: created.id })).toEqual({})
      await expectApiError(client.getWorkspace({ id: created.id }), ResourceNotFoundError, 'ResourceNotFound', 404)
      expect((await client.listWorkspaces({})).workspaces.map((w) => w.id)).not.toContain(created.id)
    })

    it('deleteWorkspace removes its bots, their chat webhooks and chat data', async () => {
      const ws = await client.createWorkspace({ name: 'to delete' })
      const inWs = clientFor(h.credentials.token, ws.id)
      const bots = await Promise.all([inWs.createBot({ name: 'a' }), inWs.createBot({ name: 'b' })])
      expect((await client.getWorkspace({ id: ws.id })).botCount).toBe(2)
      const { bot } = await inWs.getBot({ id: bots[0].bot.id })
      const webhookUrl = bot.integrations.chat!.webhookUrl
      const user = await chat.Client.connect({ apiUrl: webhookUrl })
      const { conversation } = await user.createConversation({})
      await user.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'before' } })
      const integrationId = bot.integrations.chat!.id

      await client.deleteWorkspace({ id: ws.id })
      await expectApiError(inWs.listBots({}), UnauthorizedError, 'Unauthorized', 401)
      for (const b of bots) expect(await h.store.getBot(b.bot.id)).toBeUndefined()
      expect(await h.store.getConversation(integrationId, conversation.id)).toBeUndefined()
      expect(await h.store.getUser(integrationId, user.user.id)).toBeUndefined()
      await expect(chat.Client.connect({ apiUrl: webhookUrl })).rejects.toThrow(chat.ChatClientError)
      await expect(user.listConversations({})).rejects.toThrow(chat.ResourceNotFoundError)
    })
  })

  describe('workspace members', () => {
    it('list/get/create/update/deleteWorkspaceMember, with a usable first token for a new account', async () => {
      const ws = await client.createWorkspace({ name: 'members e2e' })
      const inWs = clientFor(h.credentials.token, ws.id)
      const { members } = await inWs.listWorkspaceMembers({})
      expect(members).toEqual([{ id: accountId, userId: accountId, email: 'owner@localhost', displayName: 'Owner', createdAt: expect.stringMatching(ISO_Z), role: 'owner' }])
      expect(await inWs.getWorkspaceMember({})).toEqual(members[0])

      const email = freshEmail('e2e-member')
      const added = await inWs.createWorkspaceMember({ email, role: 'developer' })
      expect(added).toMatchObject({ email, role: 'developer', id: expect.any(String), createdAt: expect.stringMatching(ISO_Z) })
      const pat = patOf(added)
      expect(pat?.value).toMatch(/^pat_/)
      const theirs = clientFor(pat!.value, ws.id)
      expect((await theirs.getAccount({})).account).toMatchObject({ id: added.id, email })
      expect(await theirs.getWorkspaceMember({})).toMatchObject({ id: added.id, role: 'developer' })
      expect((await theirs.listWorkspaces({})).workspaces.map((w) => w.id)).toEqual([ws.id])

      await expectApiError(inWs.createWorkspaceMember({ email, role: 'viewer' }), AlreadyExistsError, 'AlreadyExists', 409)

      // An existing account added elsewhere gets no new token.
      const other = await client.createWorkspace({ name: 'members e2e 2' })
      const again = await clientFor(h.credentials.token, other.id).createWorkspaceMember({ email, role: 'viewer' })
      expect(again.id).toBe(added.id)
      expect(patOf(again)).toBeUndefined()

      const updated = await inWs.updateWorkspaceMember({ id: added.id, role: 'manager' })
      expect(updated).toMatchObject({ id: added.id, role: 'manager' })
      expect((await theirs.getWorkspaceMember({})).role).toBe('manager')
      const all = await inWs.list.workspaceMembers({ pageSize: 1 }).collect()
      expect(all.map((m) => m.id).sort()).toEqual([accountId, added.id].sort())

      // The last owner can be neither demoted nor removed.
      await expectApiError(inWs.updateWorkspaceMember({ id: accountId, role: 'administrator' }), InvalidPayloadError, 'InvalidPayload', 400)
      await expectApiError(inWs.deleteWorkspaceMember({ id: accountId }), InvalidPayloadError, 'InvalidPayload', 400)

      expect(await inWs.deleteWorkspaceMember({ id: added.id })).toEqual({})
      await expectApiError(theirs.listBots({}), ForbiddenError, 'Forbidden', 403)
      expect((await inWs.listWorkspaceMembers({})).members.map((m) => m.id)).toEqual([accountId])
    })

    it('anyone can leave: a viewer removes itself', async () => {
      const ws = await client.createWorkspace({ name: 'leave' })
      const inWs = clientFor(h.credentials.token, ws.id)
      const viewer = await inWs.createWorkspaceMember({ email: freshEmail('leaver'), role: 'viewer' })
      const asViewer = clientFor(patOf(viewer)!.value, ws.id)
      await expectApiError(asViewer.deleteWorkspaceMember({ id: accountId }), ForbiddenError, 'Forbidden', 403)
      expect(await asViewer.deleteWorkspaceMember({ id: viewer.id })).toEqual({})
      await expectApiError(asViewer.getWorkspaceMember({}), ForbiddenError, 'Forbidden', 403)
    })
  })

  describe('bots', () => {
    it('createBot gives the chat integration; getBot\'s webhookUrl works as apiUrl for @botpress/chat', async () => {
      const { bot: created } = await client.createBot({ name: 'E2E chat bot' })
      expect(created).toMatchObject({ name: 'E2E chat bot', tags: {}, createdAt: expect.stringMatching(ISO_Z) })
      const { bot } = await client.getBot({ id: created.id })
      expect(bot).toEqual(created)
      const integration = bot.integrations.chat!
      expect(integration.enabled).toBe(true)
      expect(integration.webhookId).toEqual(expect.any(String))
      expect(integration.webhookUrl).toBe(`${h.baseUrl}/${integration.webhookId}`)

      // Server-issued user key.
      const alice = await chat.Client.connect({ apiUrl: integration.webhookUrl })
      const { conversation } = await alice.createConversation({})
      const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hello from e2e' } })
      expect(message).toMatchObject({ conversationId: conversation.id, userId: alice.user.id, payload: { type: 'text', text: 'hello from e2e' } })
      const { messages } = await alice.listMessages({ conversationId: conversation.id })
      expect(messages.map((m) => m.id)).toContain(message.id)

      // Client-minted JWT with the encryption key the owner sees.
      const encryptionKey = integration.configuration.encryptionKey as string
      const bob = await chat.Client.connect({ apiUrl: integration.webhookUrl, encryptionKey, userId: unique('bob') })
      const { conversation: c2 } = await bob.createConversation({})
      await bob.createMessage({ conversationId: c2.id, payload: { type: 'text', text: 'jwt' } })
      // The demo bot's webhook does not know these users.
      await expect(chat.Client.connect({ apiUrl: h.credentials.chat.url, userKey: alice.user.key })).rejects.toThrow()
    })

    it('two bots never share a webhookId', async () => {
      const bots = await Promise.all(Array.from({ length: 10 }, (_, i) => client.createBot({ name: `dup-${i}` })))
      const ids = bots.map((b) => b.bot.integrations.chat!.webhookId)
      expect(new Set([...ids, h.credentials.chat.webhookId]).size).toBe(ids.length + 1)
    })

    it('createBot over raw HTTP with integrations.chat.configuration.encryptionKey: a JWT minted with that key is accepted', async () => {
      const encryptionKey = `e2e-key-${'q'.repeat(24)}`
      const res = await fetch(`${h.baseUrl}/v1/admin/bots`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId },
        body: JSON.stringify({ name: 'own key', integrations: { chat: { enabled: true, configuration: { encryptionKey } } } }),
      })
      expect(res.status).toBe(201)
      const { bot } = (await res.json()) as { bot: { id: string; integrations: { chat: { webhookUrl: string; configuration: { encryptionKey: string } } } } }
      expect(bot.integrations.chat.configuration.encryptionKey).toBe(encryptionKey)
      const userId = unique('own-key-user')
      const carol = await chat.Client.connect({ apiUrl: bot.integrations.chat.webhookUrl, encryptionKey, userId })
      expect(carol.user.id).toBe(userId)
      const { conversation } = await carol.createConversation({})
      await carol.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'signed' } })
      // A JWT signed with another key is refused.
      await expect(chat.Client.connect({ apiUrl: bot.integrations.chat.webhookUrl, encryptionKey: `${encryptionKey}-wrong`, userId })).rejects.toThrow(chat.UnauthorizedError)
    })

    it('updateBot: code is stored and sets deployedAt', async () => {
      const { bot } = await client.createBot({ name: 'deployable' })
      expect(bot.deployedAt).toBeUndefined()
      const deployed = (await client.updateBot({ id: bot.id, code: '// e2e deploy\n' })).bot
      expect(deployed.deployedAt).toMatch(ISO_Z)
      expect(Date.parse(deployed.deployedAt!)).toBeGreaterThanOrEqual(Date.parse(bot.createdAt))
      expect((await h.store.getBot(bot.id))!.code).toBe('// e2e deploy\n')
      expect((await client.getBot({ id: bot.id })).bot.deployedAt).toBe(deployed.deployedAt)
    })

    it('updateBot: tags null removes; chat null disables the webhook, re-enabling works; short key → 400', async () => {
      const { bot } = await client.createBot({ name: 'updatable', tags: { env: 'prod', team: 'x' } })
      const untagged = (await client.updateBot({ id: bot.id, tags: { env: null } })).bot
      expect(untagged.tags).toEqual({ team: 'x' })

      const apiUrl = bot.integrations.chat!.webhookUrl
      const dave = await chat.Client.connect({ apiUrl })
      const { conversation } = await dave.createConversation({})
      const off = (await client.updateBot({ id: bot.id, integrations: { chat: null } })).bot
      expect(off.integrations.chat?.enabled ?? false).toBe(false)
      await expect(chat.Client.connect({ apiUrl })).rejects.toThrow(chat.ChatClientError)
      await expect(dave.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'x' } })).rejects.toThrow(chat.ResourceNotFoundError)

      const on = (await client.updateBot({ id: bot.id, integrations: { chat: { enabled: true } } })).bot
      expect(on.integrations.chat!.enabled).toBe(true)
      const again = await chat.Client.connect({ apiUrl: on.integrations.chat!.webhookUrl })
      const { conversation: c2 } = await again.createConversation({})
      await again.createMessage({ conversationId: c2.id, payload: { type: 'text', text: 'back' } })

      await expectApiError(
        client.updateBot({ id: bot.id, integrations: { chat: { enabled: true, configuration: { encryptionKey: 'too-short' } } } }),
        InvalidPayloadError, 'InvalidPayload', 400,
      )
    })

    it('a 2 MB code deploys through the client (Admin body limit is 50 MB)', async () => {
      const { bot } = await client.createBot({ name: 'big code' })
      const code = `// ${'m'.repeat(2 * 1024 * 1024)}\n`
      const { bot: updated } = await client.updateBot({ id: bot.id, code })
      expect(updated.deployedAt).toMatch(ISO_Z)
      expect((await h.store.getBot(bot.id))!.code).toBe(code)
    })

    it('deleteBot: getBot 404, its chat webhook 404s, its conversations, users and messages are gone', async () => {
      const { bot } = await client.createBot({ name: 'doomed' })
      const integration = bot.integrations.chat!
      const erin = await chat.Client.connect({ apiUrl: integration.webhookUrl })
      const { conversation } = await erin.createConversation({})
      const { message } = await erin.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'last words' } })

      expect(await client.deleteBot({ id: bot.id })).toEqual({})
      await expectApiError(client.getBot({ id: bot.id }), ResourceNotFoundError, 'ResourceNotFound', 404)
      await expectApiError(client.deleteBot({ id: bot.id }), ResourceNotFoundError, 'ResourceNotFound', 404)
      await expect(chat.Client.connect({ apiUrl: integration.webhookUrl })).rejects.toThrow(chat.ChatClientError)
      await expect(erin.getConversation({ id: conversation.id })).rejects.toThrow(chat.ResourceNotFoundError)
      expect(await h.store.getConversation(integration.id, conversation.id)).toBeUndefined()
      expect(await h.store.getUser(integration.id, erin.user.id)).toBeUndefined()
      expect(await h.store.getMessage(integration.id, message.id)).toBeUndefined()
      const left = await h.store.db.selectFrom('messages').select('id').where('integration_id', '=', integration.id).execute()
      expect(left).toEqual([])
    })

    it('createBotApiKey / listBotApiKeys / deleteBotApiKey', async () => {
      const { bot } = await client.createBot({ name: 'keys' })
      const key = await client.createBotApiKey({ botId: bot.id, note: 'e2e key' })
      expect(key).toEqual({ id: expect.any(String), createdAt: expect.stringMatching(ISO_Z), note: 'e2e key', value: expect.stringMatching(/^bak_/) })
      const { baks } = await client.listBotApiKeys({ botId: bot.id })
      expect(baks).toEqual([{ id: key.id, createdAt: key.createdAt, note: 'e2e key' }])
      // A bot key is not an Admin credential.
      await expectApiError(clientFor(key.value, h.credentials.workspaceId).listBots({}), ForbiddenError, 'Forbidden', 403)
      expect(await client.deleteBotApiKey({ id: key.id })).toEqual({})
      expect((await client.listBotApiKeys({ botId: bot.id })).baks).toEqual([])
      await expectApiError(clientFor(key.value, h.credentials.workspaceId).listBots({}), UnauthorizedError, 'Unauthorized', 401)
      await expectApiError(client.deleteBotApiKey({ id: key.id }), ResourceNotFoundError, 'ResourceNotFound', 404)
    })
  })

  describe('listBots', () => {
    let ws: { id: string }
    let inWs: Client
    const created: { id: string; createdAt: string }[] = []

    beforeAll(async () => {
      ws = await client.createWorkspace({ name: 'listing' })
      inWs = clientFor(h.credentials.token, ws.id)
      for (let i = 0; i < 27; i++) {
        const { bot } = await inWs.createBot({
          name: `list-${i}`,
          tags: { env: i % 3 === 0 ? 'prod' : 'staging', idx: String(i) },
          dev: i % 4 === 0,
        })
        created.push(bot)
        if (i % 5 === 0) await sleep(2)
      }
    })

    it('client.list.bots({}).collect() pages across more than 20 bots (default and explicit pageSize)', async () => {
      const first = await inWs.listBots({})
      expect(first.bots).toHaveLength(20)
      expect(first.meta.nextToken).toEqual(expect.any(String))
      const all = await inWs.list.bots({}).collect()
      expect(all).toHaveLength(27)
      expect(new Set(all.map((b) => b.id)).size).toBe(27)
      expect(all.map((b) => b.id)).toEqual([...created].reverse().map((b) => b.id))
      const small = await inWs.list.bots({ pageSize: 4 }).collect()
      expect(small.map((b) => b.id)).toEqual(all.map((b) => b.id))
      const limited = await inWs.list.bots({ pageSize: 5 }).collect({ limit: 7 })
      expect(limited.map((b) => b.id)).toEqual(all.slice(0, 7).map((b) => b.id))
    })

    it('sortField and sortDirection', async () => {
      const asc = await inWs.list.bots({ sortField: 'createdAt', sortDirection: 'asc', pageSize: 6 }).collect()
      expect(asc.map((b) => b.id)).toEqual(created.map((b) => b.id))
      // Touch two bots: updatedAt order puts them last.
      await sleep(2)
      await inWs.updateBot({ id: created[3]!.id, description: 'touched' })
      await sleep(2)
      await inWs.updateBot({ id: created[0]!.id, description: 'touched' })
      const byUpdate = await inWs.list.bots({ sortField: 'updatedAt', sortDirection: 'asc', pageSize: 6 }).collect()
      expect(byUpdate.slice(-2).map((b) => b.id)).toEqual([created[3]!.id, created[0]!.id])
      const byUpdateDesc = await inWs.list.bots({ sortField: 'updatedAt', sortDirection: 'desc', pageSize: 6 }).collect()
      expect(byUpdateDesc.map((b) => b.id)).toEqual([...byUpdate].reverse().map((b) => b.id))
    })

    it('tags filter (sent as tags.env=prod) and dev filter', async () => {
      const prod = await inWs.list.bots({ tags: { env: 'prod' }, pageSize: 3 }).collect()
      expect(prod.map((b) => b.id).sort()).toEqual(created.filter((_, i) => i % 3 === 0).map((b) => b.id).sort())
      for (const b of prod) expect(b.tags.env).toBe('prod')
      const one = await inWs.listBots({ tags: { env: 'staging', idx: '4' } })
      expect(one.bots.map((b) => b.id)).toEqual([created[4]!.id])
      const dev = await inWs.list.bots({ dev: true }).collect()
      expect(dev.map((b) => b.id).sort()).toEqual(created.filter((_, i) => i % 4 === 0).map((b) => b.id).sort())
      const notDev = await inWs.list.bots({ dev: false }).collect()
      expect(notDev).toHaveLength(27 - dev.length)
      const devProd = await inWs.list.bots({ dev: true, tags: { env: 'prod' } }).collect()
      expect(devProd.map((b) => b.id).sort()).toEqual(created.filter((_, i) => i % 12 === 0).map((b) => b.id).sort())
      expect((await inWs.listBots({ integrationNames: ['chat'], pageSize: 100 })).bots).toHaveLength(27)
    })

    it('invalid nextToken and pageSize 0 / 101 are 400 InvalidQuery', async () => {
      await expectApiError(inWs.listBots({ nextToken: 'not-a-real-token!' }), InvalidQueryError, 'InvalidQuery', 400)
      await expectApiError(inWs.listBots({ pageSize: 0 }), InvalidQueryError, 'InvalidQuery', 400)
      await expectApiError(inWs.listBots({ pageSize: 101 }), InvalidQueryError, 'InvalidQuery', 400)
      expect((await inWs.listBots({ pageSize: 100 })).bots).toHaveLength(27)
    })
  })

  describe('roles through the client', () => {
    it('viewer reads bots but cannot write; developer writes but cannot delete; manager deletes but cannot add members', async () => {
      const ws = await client.createWorkspace({ name: 'roles e2e' })
      const inWs = clientFor(h.credentials.token, ws.id)
      const { bot } = await inWs.createBot({ name: 'role target' })
      const as = async (role: 'viewer' | 'developer' | 'manager') =>
        clientFor(patOf(await inWs.createWorkspaceMember({ email: freshEmail(`e2e-${role}`), role }))!.value, ws.id)
      const viewer = await as('viewer')
      const developer = await as('developer')
      const manager = await as('manager')

      expect((await viewer.listBots({})).bots.map((b) => b.id)).toEqual([bot.id])
      const seen = (await viewer.getBot({ id: bot.id })).bot
      expect(seen.integrations.chat!.configuration.encryptionKey).toBeUndefined()
      expect(seen.signingSecret).toBe('')
      await expectApiError(viewer.createBot({}), ForbiddenError, 'Forbidden', 403)
      await expectApiError(viewer.updateBot({ id: bot.id, name: 'no' }), ForbiddenError, 'Forbidden', 403)
      await expectApiError(viewer.deleteBot({ id: bot.id }), ForbiddenError, 'Forbidden', 403)

      const { bot: devBot } = await developer.createBot({ name: 'by developer' })
      expect((await developer.updateBot({ id: devBot.id, name: 'renamed' })).bot.name).toBe('renamed')
      await expectApiError(developer.deleteBot({ id: devBot.id }), ForbiddenError, 'Forbidden', 403)

      expect(await manager.deleteBot({ id: devBot.id })).toEqual({})
      await expectApiError(manager.createWorkspaceMember({ email: freshEmail('nope'), role: 'viewer' }), ForbiddenError, 'Forbidden', 403)
      await expectApiError(manager.deleteWorkspace({ id: ws.id }), ForbiddenError, 'Forbidden', 403)
      await expectApiError(manager.getBot({ id: h.credentials.botId }), ResourceNotFoundError, 'ResourceNotFound', 404)
    })
  })
})

describe('e2e: webhookUrl under the standard harness', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  it('getBot\'s webhookUrl points at the listening server (usable as apiUrl for @botpress/chat)', async () => {
    const client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    const { bot } = await client.getBot({ id: h.credentials.botId })
    const integration = bot.integrations.chat!
    expect(integration.webhookUrl).toBe(`${h.baseUrl}/${integration.webhookId}`)
    const user = await chat.Client.connect({ apiUrl: integration.webhookUrl })
    const { conversation } = await user.createConversation({})
    await user.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hi' } })
  })
})
