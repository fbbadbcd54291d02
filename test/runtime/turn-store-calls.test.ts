/**
 * A guard on the turn path's store work (issue #27, item 5): the store calls of one echo turn, counted (not timed)
 * on both engines. A turn here is a user's message posted through the Chat API, then the sandboxed bot's turn that
 * answers it (claim, signals, one read of the turn's states with the flow record, the reply appended once with no
 * read before it, finish, which lets the lease go when nothing follows the turn). Fails when a change adds a store call to that path; lower the figures when one
 * goes. (bench/turns.ts counts the same way and adds the SSE stream's reads.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/admin-client.js'
import { ChatClient } from '../helpers/chat-client.js'
import { ECHO_BOT } from '../helpers/echo-bot.js'
import { StoreCalls } from '../helpers/store-calls.js'
import { sleep, WAIT_MS } from './helpers.js'

const TURNS = 3
/** Per turn: appendMessage 2 (the message, the reply), claim, signalsSince, getBotStates, finish (with the release). */
const PER_TURN = { appendMessage: 2, claimBotConversation: 1, finishBotTurn: 1, getBotStates: 1, signalsSince: 1 }
/** Reads that only refill a cache when its entry expired (a slow machine): not part of a turn's own work. */
const CACHE_REFILLS = new Set(['getIntegrationByWebhookId', 'findUserByKeyHash', 'getIntegration', 'getBot', 'listIntegrations'])

describe('the store calls of one bot turn', () => {
  const calls = new StoreCalls()
  let h: Harness
  let chat: ChatClient
  let key: string
  let conversationId: string

  beforeAll(async () => {
    h = await startParley({ wrapStore: calls.wrap })
    const deployed = await adminClient(h)('PUT', `/bots/${h.credentials.botId}`, { body: { code: ECHO_BOT } })
    expect(deployed.status).toBe(200)
    chat = ChatClient.of(h)
    const owner = await chat.createUser()
    key = owner.key
    conversationId = (await chat.createConversation(key)).id
  })
  afterAll(async () => {
    await h?.close()
  })

  /** Sends `text` and waits (reading the real store, uncounted) until its reply is stored and the drain let go of the conversation. */
  const turn = async (text: string) => {
    await chat.text(key, conversationId, text)
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      const replied = (await h.store.listMessages(await integrationId(), conversationId, { limit: 5 })).items
        .some((m) => m.isBot && m.payload.text === text)
      const row = await h.store.db.selectFrom('conversations').select(['bot_seq', 'last_seq', 'bot_lease_owner'])
        .where('id', '=', conversationId).executeTakeFirstOrThrow()
      if (replied && Number(row.bot_seq) === Number(row.last_seq) && row.bot_lease_owner === null) return
      if (Date.now() > deadline) throw new Error(`no reply to ${text} within ${WAIT_MS} ms`)
      await sleep(20)
    }
  }
  let chatIntegration: string | undefined
  const integrationId = async () => (chatIntegration ??= (await h.store.getIntegrationByWebhookId(h.credentials.chat.webhookId))!.id)

  it(`is ${Object.values(PER_TURN).reduce((a, b) => a + b, 0)}: no read before the reply's append, one read of the states (flow included)`, async () => {
    // Warm-up: the conversation's start check, the caches of keys, integrations and bots.
    await turn('warm-1')
    await turn('warm-2')
    calls.start()
    for (let i = 0; i < TURNS; i++) await turn(`counted-${i}`)
    const { byMethod } = calls.stop()
    const turnCalls = Object.fromEntries(Object.entries(byMethod).filter(([method]) => !CACHE_REFILLS.has(method)))
    expect(turnCalls).toEqual(Object.fromEntries(Object.entries(PER_TURN).map(([method, n]) => [method, n * TURNS])))
  })

  it('an echo turn writes no state row: the flow record is written only when a turn changes it', async () => {
    const flowRow = async () => h.store.db.selectFrom('bot_states').select(['data', 'updated_at'])
      .where('bot_id', '=', h.credentials.botId).where('scope', '=', 'flow').where('scope_id', '=', `${await integrationId()}:${conversationId}`)
      .executeTakeFirstOrThrow()
    await turn('before')
    const before = await flowRow()
    expect(JSON.parse(before.data)).toMatchObject({ started: true })
    for (let i = 0; i < TURNS; i++) {
      await sleep(5)
      await turn(`unchanged-${i}`)
    }
    expect(await flowRow()).toEqual(before)
  })
})
