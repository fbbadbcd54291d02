/**
 * State across turns: `event.state.user`, `.conversation` and `.bot` counters persist from turn to
 * turn, are scoped as documented (user: across conversations; conversation: one; bot: all), survive
 * a server restart on the same data, and a state that cannot be saved keeps its previous value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chatUrl, createBot, jsonAfter, newDataPlace, startOn, Talk, uid, waitForLog, type DataPlace, type Restartable, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  beforeIncoming({ event }) {
    // not saved (documented): state changes here are dropped
    event.state.user.fromBeforeIncoming = true
  },
  async afterIncoming({ event, client, state }) {
    if (event.type !== 'text') return
    if (event.payload.text === 'cycle') {
      state.conversation.n = 1000
      state.conversation.self = state.conversation
      await client.createMessage({ payload: { type: 'text', text: 'tried a cycle' } })
      return
    }
    if (event.payload.text === 'sync') {
      // changes nothing: its reply tells the test that the conversation's previous turn has ended (turns of
      // one conversation run one after another, and a turn's state is saved when it ends, after its replies)
      await client.createMessage({ payload: { type: 'text', text: 'synced' } })
      return
    }
    const key = /^set (\w+)$/.exec(event.payload.text)
    if (key) {
      // holds the turn for a moment, so that turns of two conversations sent together overlap
      const end = Date.now() + 300
      while (Date.now() < end) {}
      state.user[key[1]] = true
      state.bot[key[1]] = true
      await client.createMessage({ payload: { type: 'text', text: 'set ' + key[1] } })
      return
    }
    if (event.payload.text === 'keys') {
      await client.createMessage({ payload: { type: 'text', text: 'KEYS ' + JSON.stringify({ user: Object.keys(state.user).sort(), bot: Object.keys(state.bot).sort() }) } })
      return
    }
    if (event.payload.text === 'replace') {
      state.user = 'not an object'
      await client.createMessage({ payload: { type: 'text', text: 'replaced user state' } })
      return
    }
    state.user.n = (state.user.n || 0) + 1
    state.conversation.n = (state.conversation.n || 0) + 1
    state.bot.n = (state.bot.n || 0) + 1
    state.conversation.seen = [...(state.conversation.seen || []), event.payload.text]
    await client.createMessage({ payload: { type: 'text', text: 'STATE ' + JSON.stringify({
      user: state.user.n, conversation: state.conversation.n, bot: state.bot.n, seen: state.conversation.seen,
      fromBeforeIncoming: state.user.fromBeforeIncoming === true,
    }) } })
  },
}
`

interface Counts { user: number; conversation: number; bot: number; seen: string[]; fromBeforeIncoming: boolean }

describe('runtime: state across turns and restarts', () => {
  let place: DataPlace
  let server: Restartable | undefined
  let bot: TestBot

  beforeAll(async () => {
    place = await newDataPlace()
    server = await startOn(place)
    bot = await createBot(server, CODE)
  })
  afterAll(async () => {
    await server?.stop()
    await place?.remove()
  })

  const counts = async (talk: Talk, text: string): Promise<Counts> => {
    const [reply] = await talk.askText(text)
    return jsonAfter<Counts>(reply!, 'STATE ')
  }

  it('user, conversation and bot counters persist across turns, conversations and users; restart keeps them', async () => {
    const annId = uid('ann')
    const a1 = await Talk.open(bot, { userId: annId })
    expect(await counts(a1, 'one')).toEqual({ user: 1, conversation: 1, bot: 1, seen: ['one'], fromBeforeIncoming: false })
    expect(await counts(a1, 'two')).toEqual({ user: 2, conversation: 2, bot: 2, seen: ['one', 'two'], fromBeforeIncoming: false })
    expect(await counts(a1, 'three')).toMatchObject({ user: 3, conversation: 3, bot: 3 })
    // the reply comes before the turn's end (when its state is saved): wait for that end before going elsewhere
    expect(await a1.askText('sync')).toEqual(['synced'])

    // same user, another conversation: the user counter goes on, the conversation one starts over
    const a2 = await Talk.open(bot, { user: a1.user })
    expect(await counts(a2, 'elsewhere')).toEqual({ user: 4, conversation: 1, bot: 4, seen: ['elsewhere'], fromBeforeIncoming: false })
    expect(await a2.askText('sync')).toEqual(['synced'])

    // another user: only the bot counter is shared
    const b1 = await Talk.open(bot, { userId: uid('bob') })
    expect(await counts(b1, 'hi')).toEqual({ user: 1, conversation: 1, bot: 5, seen: ['hi'], fromBeforeIncoming: false })
    await Promise.all([a1.close(), a2.close(), b1.close()])

    // restart on the same data
    await server!.stop()
    server = undefined
    server = await startOn(place)
    const url = chatUrl(server, bot)
    const again = await Talk.open({ url, encryptionKey: bot.encryptionKey }, { userId: annId, conversationId: a1.conversationId })
    try {
      expect(await counts(again, 'after restart')).toEqual({
        user: 5, conversation: 4, bot: 6, seen: ['one', 'two', 'three', 'after restart'], fromBeforeIncoming: false,
      })
    } finally {
      await again.close()
    }
  })

  it('turns of two conversations at once, each changing its own keys of the same user and bot state: both changes are kept', async () => {
    const where = { url: chatUrl(server!, bot), encryptionKey: bot.encryptionKey }
    const one = await Talk.open(where, { userId: uid('both') })
    const two = await Talk.open(where, { user: one.user })
    try {
      // Each turn reads the state when it starts and saves it when it ends: both start before either ends.
      const replies = Promise.all([one.botCount(1), two.botCount(1)])
      await Promise.all([one.say('set x'), two.say('set y')])
      expect((await replies).map((r) => r.map((m) => m.payload))).toEqual([[{ type: 'text', text: 'set x' }], [{ type: 'text', text: 'set y' }]])
      await Promise.all([one.askText('sync'), two.askText('sync')])
      const [keys] = await one.askText('keys')
      const seen = jsonAfter<{ user: string[]; bot: string[] }>(keys!, 'KEYS ')
      expect(seen.user).toEqual(['x', 'y'])
      expect(seen.bot).toEqual(expect.arrayContaining(['x', 'y']))
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })

  it('a state that cannot be saved (a cycle, a non-object) is reported and keeps its value from before the turn', async () => {
    const talk = await Talk.open({ url: chatUrl(server!, bot), encryptionKey: bot.encryptionKey }, { userId: uid('cy') })
    try {
      expect(await counts(talk, 'a')).toMatchObject({ user: 1, conversation: 1 })
      expect(await talk.askText('cycle')).toEqual(['tried a cycle'])
      await waitForLog(server!, bot.id, (l) => l.level === 'error' && l.conversationId === talk.conversationId && /state/.test(l.message))
      expect(await counts(talk, 'b')).toMatchObject({ user: 2, conversation: 2, seen: ['a', 'b'] })
      expect(await talk.askText('replace')).toEqual(['replaced user state'])
      await waitForLog(server!, bot.id, (l) => l.level === 'error' && l.conversationId === talk.conversationId && /state\.user/.test(l.message))
      expect(await counts(talk, 'c')).toMatchObject({ user: 3, conversation: 3, seen: ['a', 'b', 'c'] })
    } finally {
      await talk.close()
    }
  })
})
