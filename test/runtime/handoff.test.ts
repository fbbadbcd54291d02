/**
 * Human handoff end to end (README "Human handoff"), both backends, real HTTP, official clients:
 * a sandboxed bot hands off on "human" (client.startHandoff) → the user's messages run no hooks →
 * an agent (role `agent`) claims through the Admin API and replies: the @botpress/chat client listening
 * on the stream receives the reply with the agent's name → an internal note never reaches the user →
 * the agent ends the handoff → the bot answers again, and it saw handoff_started / handoff_ended.
 * Also: the `handoff` workflow card, and the Runtime API's start/end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { allLogs, createBot, listAll, Talk, textOf, uid, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async beforeIncoming({ event }) {
    if (event.type === 'text') console.log('BEFORE ' + event.payload.text)
  },
  async afterIncoming({ event, client }) {
    if (event.type === 'handoff_started' || event.type === 'handoff_ended') {
      await client.createMessage({ payload: { type: 'text', text: 'BOT SAW ' + event.type + (event.payload.reason ? ' (' + event.payload.reason + ')' : '') + (event.payload.agent ? ' agent=' + event.payload.agent.name : '') } })
      if (event.type === 'handoff_started' && event.payload.reason === 'bounce') {
        const { handoff } = await client.endHandoff({})
        await client.createMessage({ payload: { type: 'text', text: 'ENDED BY BOT ' + handoff.status } })
      }
      return
    }
    if (event.type !== 'text' || event.trigger) return
    console.log('HOOK ' + event.payload.text)
    if (event.payload.text === 'human') {
      const { handoff } = await client.startHandoff({ reason: 'asked for a human' })
      await client.createMessage({ payload: { type: 'text', text: 'HANDOFF ' + handoff.status } })
      return
    }
    if (event.payload.text === 'bye human') {
      await client.endHandoff({})
      return
    }
    await client.createMessage({ payload: { type: 'text', text: 'echo: ' + event.payload.text } })
  },
}

export const workflows = {
  escalate: {
    trigger: { type: 'message', text: 'agent please' },
    nodes: { main: { cards: [
      { type: 'say', text: 'Connecting you to a person' },
      { type: 'handoff', reason: 'card for {{ event.preview }}' },
      { type: 'say', text: 'NOT REACHED' },
    ] } },
  },
}
`

interface Res { status: number; body: any }

describe('human handoff', () => {
  let h: Harness
  let bot: TestBot
  let agentToken: string
  let agentId: string

  /** The Admin API over real HTTP with a member's Bearer token. */
  const admin = async (method: 'GET' | 'POST', path: string, body?: unknown, token = agentToken): Promise<Res> => {
    const res = await fetch(`${h.baseUrl}/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'x-workspace-id': h.credentials.workspaceId, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined }
  }

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
    // The first token of a new account comes back once, on the member (Parley's self-hosted invite).
    const raw = await fetch(`${h.baseUrl}/v1/admin/workspace-members`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `${uid('agent2')}@example.com`, role: 'agent' }),
    })
    const second = (await raw.json()) as { id: string; role: string; pat: { value: string } }
    expect(second.role).toBe('agent')
    agentToken = second.pat.value
    agentId = second.id
  })
  afterAll(async () => h?.close())

  it('hand off on "human", user messages run no hooks, agent claims and replies with their name, note stays internal, end → the bot answers again', async () => {
    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('hello')).toEqual(['echo: hello'])

      await talk.say('human')
      await talk.until(() => talk.botTexts().includes('BOT SAW handoff_started (asked for a human)'), 'the bot to see handoff_started')
      expect(talk.botTexts()).toContain('HANDOFF waiting')

      // The inbox lists it, waiting, with its reason.
      const waiting = await admin('GET', `/bots/${bot.id}/handoffs?status=waiting`)
      expect(waiting.status).toBe(200)
      const listed = waiting.body.handoffs.find((x: { conversationId: string }) => x.conversationId === talk.conversationId)
      expect(listed).toMatchObject({ botId: bot.id, userId: talk.user.user.id, status: 'waiting', reason: 'asked for a human', notes: [] })
      expect(listed.claimedBy).toBeUndefined()

      // While handed off: stored and streamed, but no hook runs.
      const during = await talk.say('are you there?')
      expect((await listAll(talk.user, talk.conversationId)).some((m) => m.id === during.id)).toBe(true)

      const claimed = await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/claim`, {})
      expect(claimed.status, JSON.stringify(claimed.body)).toBe(200)
      expect(claimed.body.handoff).toMatchObject({ status: 'active', claimedBy: { memberId: agentId } })
      const agentName = claimed.body.handoff.claimedBy.name as string
      await talk.until(() => talk.messages.some((m) => textOf(m) === `${agentName} joined the conversation`), 'the joined line')
      const joined = talk.messages.find((m) => textOf(m) === `${agentName} joined the conversation`)!
      expect(joined.metadata).toEqual({ handoff: { agent: { name: agentName }, event: 'joined' } })

      const sent = await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/messages`, { type: 'text', payload: { text: 'Hi, Ada from support here' } })
      expect(sent.status, JSON.stringify(sent.body)).toBe(200)
      expect(sent.body.message).toMatchObject({ conversationId: talk.conversationId, payload: { type: 'text', text: 'Hi, Ada from support here' } })
      await talk.until(() => talk.messages.some((m) => textOf(m) === 'Hi, Ada from support here'), 'the agent reply on the stream')
      const reply = talk.messages.find((m) => textOf(m) === 'Hi, Ada from support here')!
      expect(reply.metadata).toEqual({ handoff: { agent: { name: agentName } } })
      expect(reply.userId).not.toBe(talk.user.user.id)

      // A choice payload too (quick replies), through the Chat API payload rules.
      const choice = await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/messages`, { type: 'choice', payload: { text: 'Pick', options: [{ label: 'A', value: 'a' }] } })
      expect(choice.status, JSON.stringify(choice.body)).toBe(200)
      const bad = await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/messages`, { type: 'text', payload: {} })
      expect(bad.status).toBe(400)

      const note = await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/messages`, { note: 'VIP customer, be nice' })
      expect(note.status).toBe(200)
      expect(note.body.note).toMatchObject({ memberId: agentId, text: 'VIP customer, be nice' })
      const got = await admin('GET', `/bots/${bot.id}/handoffs/${talk.conversationId}`)
      expect(got.body.handoff.notes.map((n: { text: string }) => n.text)).toEqual(['VIP customer, be nice'])

      const ended = await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/end`, {})
      expect(ended.status).toBe(200)
      expect(ended.body.handoff).toMatchObject({ status: 'ended', claimedBy: { memberId: agentId } })
      expect(typeof ended.body.handoff.endedAt).toBe('string')
      await talk.until(() => talk.botTexts().includes(`BOT SAW handoff_ended (asked for a human) agent=${agentName}`), 'the bot to see handoff_ended')
      expect(talk.messages.some((m) => textOf(m) === `${agentName} left the conversation`)).toBe(true)

      // handoff_ended comes after "are you there?" in the log: that message was passed over without any hook.
      expect(talk.botTexts()).not.toContain('echo: are you there?')
      const { logs } = await allLogs(h, bot.id)
      expect(logs.map((l) => l.message)).not.toContain('BEFORE are you there?')
      expect(logs.map((l) => l.message)).not.toContain('HOOK are you there?')
      expect(logs.map((l) => l.message)).toContain('BEFORE hello')

      // The note never reached the user: not on the stream, not in the history.
      const history = await listAll(talk.user, talk.conversationId)
      expect(JSON.stringify(history)).not.toContain('VIP customer')
      expect(JSON.stringify(talk.messages)).not.toContain('VIP customer')
      expect(JSON.stringify(talk.events)).not.toContain('VIP customer')

      expect(await talk.askText('hello again')).toEqual(['echo: hello again'])
      expect(talk.unknown).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('the handoff workflow card hands off and ends its flow; the Runtime API ends it', async () => {
    const talk = await Talk.open(bot)
    try {
      await talk.say('agent please')
      await talk.until(() => talk.botTexts().includes('BOT SAW handoff_started (card for agent please)'), 'handoff_started from the card')
      expect(talk.botTexts()).toContain('Connecting you to a person')
      expect(talk.botTexts()).not.toContain('NOT REACHED')
      const got = await admin('GET', `/bots/${bot.id}/handoffs/${talk.conversationId}`)
      expect(got.body.handoff).toMatchObject({ status: 'waiting', reason: 'card for agent please' })
      // Handed off: "bye human" reaches no hook either, so the Runtime API ends it (as bot code or a helpdesk would).
      const res = await fetch(`${h.baseUrl}/v1/chat/conversations/${talk.conversationId}/handoff/end`, {
        method: 'POST', headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': bot.id, 'content-type': 'application/json' }, body: '{}',
      })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { handoff: { status: string } }).handoff.status).toBe('ended')
      await talk.until(() => talk.botTexts().some((t) => t.startsWith('BOT SAW handoff_ended')), 'handoff_ended')
      expect(await talk.askText('back')).toEqual(['echo: back'])
    } finally {
      await talk.close()
    }
  })

  it('the Runtime API starts a handoff (idempotent while open); a helpdesk starts one through the Admin API', async () => {
    const talk = await Talk.open(bot)
    try {
      expect(await talk.askText('first')).toEqual(['echo: first'])
      const start = async () => {
        const res = await fetch(`${h.baseUrl}/v1/chat/conversations/${talk.conversationId}/handoff`, {
          method: 'POST', headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': bot.id, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'runtime' }),
        })
        return { status: res.status, body: (await res.json()) as { handoff: { id: string; status: string } } }
      }
      const a = await start()
      const b = await start()
      expect(a.status).toBe(200)
      expect(b.body.handoff.id).toBe(a.body.handoff.id)
      await talk.until(() => talk.botTexts().includes('BOT SAW handoff_started (runtime)'), 'handoff_started')
      // Bot code's own endHandoff cannot be reached by a user message now; the agent returns it.
      expect((await admin('POST', `/bots/${bot.id}/handoffs/${talk.conversationId}/end`, {})).status).toBe(200)
      await talk.until(() => talk.botTexts().some((t) => t === 'BOT SAW handoff_ended (runtime)'), 'handoff_ended')
      // Ended: the Admin API (an external helpdesk) starts a new one.
      const helpdesk = await admin('POST', `/bots/${bot.id}/handoffs`, { conversationId: talk.conversationId, reason: 'helpdesk' })
      expect(helpdesk.status).toBe(200)
      expect(helpdesk.body.handoff).toMatchObject({ status: 'waiting', reason: 'helpdesk' })
      expect(helpdesk.body.handoff.id).not.toBe(a.body.handoff.id)
      await talk.until(() => talk.botTexts().includes('BOT SAW handoff_started (helpdesk)'), 'handoff_started (helpdesk)')
    } finally {
      await talk.close()
    }
  })

  it('bot code ends a handoff with client.endHandoff', async () => {
    const talk = await Talk.open(bot)
    try {
      const res = await fetch(`${h.baseUrl}/v1/chat/conversations/${talk.conversationId}/handoff`, {
        method: 'POST', headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': bot.id, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'bounce' }),
      })
      expect(res.status).toBe(200)
      await talk.until(() => talk.botTexts().includes('ENDED BY BOT ended'), 'the bot to end the handoff')
      await talk.until(() => talk.botTexts().includes('BOT SAW handoff_ended (bounce)'), 'handoff_ended')
      expect(await talk.askText('after bounce')).toEqual(['echo: after bounce'])
    } finally {
      await talk.close()
    }
  })

  it('stats: handoffs and wait times per day', async () => {
    const today = new Date().toISOString().slice(0, 10)
    const res = await admin('GET', `/bots/${bot.id}/handoffs/stats?startDate=${today}&endDate=${today}`)
    expect(res.status).toBe(200)
    expect(res.body.records).toHaveLength(1)
    const [day] = res.body.records
    expect(day.requested).toBe(5)
    expect(day.claimed).toBe(1)
    expect(day.ended).toBe(4)
    expect(day.waitSeconds.max).toBeGreaterThanOrEqual(0)
    expect(day.waitSeconds.mean).toBe(day.waitSeconds.max)
    expect((await admin('GET', `/bots/${bot.id}/handoffs/stats?startDate=x&endDate=${today}`)).status).toBe(400)
    // The same, counted by the instance's metrics.
    const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text()
    const sample = (event: string) => Number(new RegExp(`^parley_handoffs_total\\{event="${event}"\\} (\\d+)$`, 'm').exec(metrics)?.[1])
    expect([sample('started'), sample('claimed'), sample('ended')]).toEqual([5, 1, 4])
    expect(metrics).toMatch(/^parley_handoff_wait_seconds_count 1$/m)
  })

  it('the console\'s transcript: a developer reads the logs the bot\'s code wrote in the conversation, an agent none', async () => {
    const raw = await fetch(`${h.baseUrl}/v1/admin/workspace-members`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `${uid('dev')}@example.com`, role: 'developer' }),
    })
    const developerToken = ((await raw.json()) as { pat: { value: string } }).pat.value
    const talk = await Talk.open(bot)
    try {
      const word = uid('logged')
      expect(await talk.askText(word)).toEqual([`echo: ${word}`])
      const path = `/bots/${bot.id}/conversations/${talk.conversationId}/transcript`
      // The bot's console.log lines of the turn (BEFORE from beforeIncoming, HOOK from afterIncoming).
      await expect.poll(async () => (await admin('GET', path, undefined, developerToken)).body.logs.map((l: { message: string }) => l.message), { timeout: 20_000 })
        .toEqual(expect.arrayContaining([`BEFORE ${word}`, `HOOK ${word}`]))
      const asAgent = await admin('GET', path)
      expect(asAgent.status).toBe(200)
      expect(asAgent.body.messages.map((m: { payload: { text?: string } }) => m.payload.text)).toEqual([word, `echo: ${word}`])
      expect(asAgent.body.logs).toEqual([])
      expect(JSON.stringify(asAgent.body)).not.toContain(`HOOK ${word}`)
      // Nor the bot's logs page (bots.read).
      expect((await admin('GET', `/bots/${bot.id}/logs`)).status).toBe(403)
    } finally {
      await talk.close()
    }
  })
})
