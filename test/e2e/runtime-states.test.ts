/**
 * Runtime API states driven by the official @botpress/client@1.45.0 over real HTTP, as a bot holding
 * its bot API key: declarations in the bot definition (getBot shows them), get/set/getOrSet/patch/
 * setStateExpiry on every type, `payload: null` deleting, undeclared names and schema violations
 * refused with the reason, hostile schemas refused at updateBot, tenancy (another bot's conversation
 * or user is 404), and expiry (reads 404 at once, getOrSet creates anew).
 */
import { InvalidPayloadError, isApiError, ResourceNotFoundError, type ApiError, type Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { probeRegExp } from '../helpers/regexp-probe.js'
import { eventually, runtimeBot, type RuntimeBot } from '../helpers/runtime-bot.js'

const STATES = {
  profile: { type: 'user', schema: { type: 'object', properties: { name: { type: 'string' }, visits: { type: 'integer', minimum: 0 } }, required: ['name'], additionalProperties: false } },
  cart: { type: 'conversation', schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } } } },
  settings: { type: 'bot', schema: { type: 'object' } },
  short: { type: 'conversation', schema: { type: 'object' }, expiry: 1_000 },
  hookData: { type: 'integration', schema: { type: 'object' } },
  progress: { type: 'workflow', schema: { type: 'object' } },
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise
  } catch (err) {
    if (isApiError(err)) return err
    throw err
  }
  throw new Error('expected the call to fail')
}

describe('e2e: Runtime API states (official client)', () => {
  let h: Harness
  let bot: RuntimeBot
  let client: Client
  let userId: string
  let conversationId: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await runtimeBot(h, { states: STATES })
    client = bot.client
    ;({ userId, conversationId } = await bot.converse())
  })
  afterAll(async () => h?.close())

  it('getBot returns the declarations; updateBot adds and removes them (null)', async () => {
    const { bot: full } = await bot.admin.getBot({ id: bot.id })
    expect(full.states.profile).toMatchObject({ type: 'user', schema: STATES.profile.schema })
    expect(full.states.short).toMatchObject({ type: 'conversation', expiry: 1_000 })
    await bot.admin.updateBot({ id: bot.id, states: { extra: { type: 'bot', schema: { type: 'object' } } } })
    expect(Object.keys((await bot.admin.getBot({ id: bot.id })).bot.states).sort()).toEqual([...Object.keys(STATES), 'extra'].sort())
    await bot.admin.updateBot({ id: bot.id, states: { extra: null } as never })
    expect((await bot.admin.getBot({ id: bot.id })).bot.states.extra).toBeUndefined()
  })

  it('setState → getState → patchState → getOrSetState (existing) on a user; payload null deletes', async () => {
    await expect(client.getState({ type: 'user', id: userId, name: 'profile' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const set = await client.setState({ type: 'user', id: userId, name: 'profile', payload: { name: 'Ada' } })
    expect(set.state).toMatchObject({ botId: bot.id, userId, name: 'profile', type: 'user', payload: { name: 'Ada' } })
    expect(set.state.expiry).toBeUndefined()
    const got = await client.getState({ type: 'user', id: userId, name: 'profile' })
    expect(got.state).toEqual(set.state)
    const patched = await client.patchState({ type: 'user', id: userId, name: 'profile', payload: { visits: 3 } })
    expect(patched.state.payload).toEqual({ name: 'Ada', visits: 3 })
    expect(patched.state.id).toBe(set.state.id)
    const kept = await client.getOrSetState({ type: 'user', id: userId, name: 'profile', payload: { name: 'Other' } })
    expect(kept.state.payload).toEqual({ name: 'Ada', visits: 3 })
    await client.setState({ type: 'user', id: userId, name: 'profile', payload: null })
    await expect(client.getState({ type: 'user', id: userId, name: 'profile' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.patchState({ type: 'user', id: userId, name: 'profile', payload: { visits: 1 } })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const created = await client.getOrSetState({ type: 'user', id: userId, name: 'profile', payload: { name: 'New' } })
    expect(created.state.payload).toEqual({ name: 'New' })
  })

  it('conversation, bot and integration states (workflow states: runtime-workflows.test.ts)', async () => {
    const cart = await client.setState({ type: 'conversation', id: conversationId, name: 'cart', payload: { items: ['tea'] } })
    expect(cart.state).toMatchObject({ conversationId, type: 'conversation', payload: { items: ['tea'] } })
    const settings = await client.setState({ type: 'bot', id: bot.id, name: 'settings', payload: { lang: 'fr' } })
    expect(settings.state).toMatchObject({ botId: bot.id, type: 'bot', payload: { lang: 'fr' } })
    expect(settings.state.conversationId).toBeUndefined()
    const hook = await client.setState({ type: 'integration', id: bot.chat.integrationId, name: 'hookData', payload: { n: 1 } })
    expect(hook.state.type).toBe('integration')
    expect((await client.getState({ type: 'integration', id: 'chat', name: 'hookData' })).state.payload).toEqual({ n: 1 })
  })

  it('refuses undeclared names, the wrong type and payloads that break the schema, with the reason', async () => {
    const undeclared = await rejection(client.setState({ type: 'user', id: userId, name: 'nope', payload: {} }))
    expect(undeclared).toBeInstanceOf(InvalidPayloadError)
    expect(undeclared.message).toContain('not declared')
    const wrongType = await rejection(client.setState({ type: 'conversation', id: conversationId, name: 'profile', payload: { name: 'x' } }))
    expect(wrongType.message).toContain('declared for type "user"')
    const missing = await rejection(client.setState({ type: 'user', id: userId, name: 'profile', payload: { visits: 1 } }))
    expect(missing).toBeInstanceOf(InvalidPayloadError)
    expect(missing.message).toContain("must have required property 'name'")
    const negative = await rejection(client.patchState({ type: 'user', id: userId, name: 'profile', payload: { visits: -1 } }))
    expect(negative.message).toContain('payload/visits must be >= 0')
    const extra = await rejection(client.getOrSetState({ type: 'user', id: userId, name: 'profile', payload: { name: 'a', other: true } }))
    expect(extra.message).toContain('additional properties')
    const items = await rejection(client.setState({ type: 'conversation', id: conversationId, name: 'cart', payload: { items: [1] } }))
    expect(items.message).toContain('payload/items/0 must be string')
    await expect(client.getState({ type: 'user', id: userId, name: 'nope' })).rejects.toBeInstanceOf(InvalidPayloadError)
  })

  it('refuses hostile or unusable schemas at updateBot with the reason, and keeps the previous declarations', async () => {
    const refused = async (states: Record<string, unknown>, reason: string) => {
      const err = await rejection(bot.admin.updateBot({ id: bot.id, states: states as never }))
      expect(err.code).toBe(400)
      expect(err.message).toContain(reason)
    }
    await refused({ bad: { type: 'user', schema: { type: 'object', properties: { a: { type: 'string', pattern: '(?=a)a' } } } } }, 'lookarounds are not supported')
    await refused({ bad: { type: 'user', schema: { type: 'object', properties: { a: { $ref: 'http://example.com/remote.json' } } } } }, 'not a usable JSON Schema')
    await refused({ bad: { type: 'user', schema: { type: 'nonsense' } } }, 'not a usable JSON Schema')
    let deep: Record<string, unknown> = { type: 'object' }
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { x: deep } }
    await refused({ bad: { type: 'user', schema: deep } }, 'nested deeper')
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`p${i}`, { type: 'string', maxLength: 10 }])) }
    await refused({ bad: { type: 'user', schema: wide } }, 'larger than')
    await refused({ bad: { type: 'task', schema: {} } }, 'type must be one of')
    await refused({ bad: { type: 'user', schema: {}, expiry: 5 } }, 'expiry')
    expect((await bot.admin.getBot({ id: bot.id })).bot.states.bad).toBeUndefined()
    // The bot still works with its declarations.
    await client.setState({ type: 'bot', id: bot.id, name: 'settings', payload: { ok: true } })
  })

  it('checks schema patterns with RE2: an attack pattern answers at once and never reaches JavaScript\'s RegExp (#24)', async () => {
    // 'a?'×24+'b' against 'a'×32 backtracked for seconds in ajv's default engine (safe-regex2 accepted it).
    const pattern = 'a?'.repeat(24) + 'b'
    await bot.admin.updateBot({ id: bot.id, states: { rx: { type: 'bot', schema: { type: 'object', properties: { s: { type: 'string', pattern } } } } } })
    const probe = probeRegExp()
    try {
      const bad = await rejection(client.setState({ type: 'bot', id: bot.id, name: 'rx', payload: { s: 'a'.repeat(32) } }))
      expect(bad.message).toContain('must match pattern')
      await client.setState({ type: 'bot', id: bot.id, name: 'rx', payload: { s: 'a'.repeat(30) + 'b' } })
    } finally { probe.restore() }
    expect(probe.sources.filter((s) => s === pattern)).toEqual([])
    await bot.admin.updateBot({ id: bot.id, states: { rx: null } as never })
  })

  it("another bot's conversation, user or id is 404; a payload over the bound is 400", async () => {
    const other = await runtimeBot(h, { states: STATES })
    const theirs = await other.converse()
    await expect(client.setState({ type: 'conversation', id: theirs.conversationId, name: 'cart', payload: {} })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.getState({ type: 'user', id: theirs.userId, name: 'profile' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.setState({ type: 'bot', id: other.id, name: 'settings', payload: {} })).rejects.toBeInstanceOf(ResourceNotFoundError)
    await expect(client.setState({ type: 'workflow', id: 'wf-unknown', name: 'progress', payload: {} })).rejects.toBeInstanceOf(ResourceNotFoundError)
    // The other bot's state of the same name on its own conversation is its own.
    await other.client.setState({ type: 'conversation', id: theirs.conversationId, name: 'cart', payload: { items: ['theirs'] } })
    await expect(client.getState({ type: 'conversation', id: theirs.conversationId, name: 'cart' })).rejects.toBeInstanceOf(ResourceNotFoundError)
    const big = await rejection(client.setState({ type: 'bot', id: bot.id, name: 'settings', payload: { big: 'x'.repeat(200_000) } }))
    expect(big.code).toBe(400)
    expect(big.message).toContain('exceeds')
  })

  it('expiry: declared default, per write and setStateExpiry; an expired state reads 404 and getOrSet creates it anew', async () => {
    const { conversationId: conv } = await bot.converse()
    const first = await client.setState({ type: 'conversation', id: conv, name: 'short', payload: { v: 1 } })
    expect(first.state.expiry).toBe(1_000)
    expect(Date.parse(first.state.expiresAt!) - Date.parse(first.state.updatedAt)).toBe(1_000)
    // setStateExpiry moves it (from now) and null removes it.
    const never = await client.setStateExpiry({ type: 'conversation', id: conv, name: 'short', expiry: null })
    expect(never.state.expiry).toBeUndefined()
    expect(never.state.expiresAt).toBeUndefined()
    const again = await client.setStateExpiry({ type: 'conversation', id: conv, name: 'short', expiry: 1_000 })
    expect(again.state.expiry).toBe(1_000)
    await eventually('the state to expire', async () => {
      try {
        await client.getState({ type: 'conversation', id: conv, name: 'short' })
        return undefined
      } catch (err) {
        if (err instanceof ResourceNotFoundError) return true
        throw err
      }
    })
    const anew = await client.getOrSetState({ type: 'conversation', id: conv, name: 'short', payload: { v: 2 } })
    expect(anew.state.payload).toEqual({ v: 2 })
    expect(anew.state.id).not.toBe(first.state.id)
    // Per-write expiry overrides the declared one; null makes it permanent.
    const permanent = await client.setState({ type: 'conversation', id: conv, name: 'short', payload: { v: 3 }, expiry: null })
    expect(permanent.state.expiry).toBeUndefined()
    const custom = await client.patchState({ type: 'conversation', id: conv, name: 'short', payload: { w: 1 }, expiry: 60_000 })
    expect(custom.state).toMatchObject({ expiry: 60_000, payload: { v: 3, w: 1 } })
  })
})
