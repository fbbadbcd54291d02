/**
 * Actions (from hooks, execute cards and action cards), every card type (say with templates,
 * execute, action, capture with validation and retries, transition, end) and every trigger
 * (conversation started, message text, message pattern, custom event name) with the
 * `event.trigger` each one reports; through the official clients against a running server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, jsonAfter, Talk, textOf, uid, waitForLog, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const actions = {
  async add(ctx, input) {
    return { sum: input.a + input.b, types: [typeof input.a, typeof input.b], note: input.note }
  },
  async notify(ctx, { text }) {
    const r = await ctx.client.createMessage({ payload: { type: 'text', text: 'notified: ' + text } })
    return { messageId: r.message.id }
  },
  async whoami(ctx) {
    return { userId: ctx.event.userId, conversationId: ctx.event.conversationId, sameState: ctx.state === ctx.event.state, trigger: ctx.event.trigger || null }
  },
  async nested(ctx, input) {
    return ctx.actions.add({ a: input.n, b: input.n })
  },
  async fail() {
    throw new Error('action failed on purpose')
  },
}

export const hooks = {
  async afterIncoming({ event, client, actions }) {
    if (event.trigger || event.type !== 'text') return
    if (event.payload.text !== 'hook-actions') return
    const add = await actions.add({ a: 2, b: 3 })
    const notified = await actions.notify({ text: 'from the hook' })
    const who = await actions.whoami()
    const nested = await actions.nested({ n: 21 })
    let error = null
    try { await actions.fail() } catch (e) { error = e.message }
    await client.createMessage({ payload: { type: 'text', text: 'ACTIONS ' + JSON.stringify({ add, notified: typeof notified.messageId, who, nested, error }) } })
  },
}

export const workflows = {
  welcome: {
    trigger: { type: 'conversationStarted' },
    nodes: { hi: { cards: [
      { type: 'say', text: 'welcome {{ event.userId }}' },
      { type: 'say', text: 'TRIGGER {{ JSON.stringify(event.trigger) }}' },
    ] } },
  },
  status: {
    trigger: { type: 'message', text: 'Order Status' },
    nodes: { main: { cards: [
      { type: 'say', text: 'TRIGGER {{ JSON.stringify(event.trigger) }}' },
      { type: 'say', payload: {
        type: 'choice', text: 'Status for {{ event.preview.trim().toUpperCase() }}?',
        options: [{ label: 'Track {{ 1 + 1 }}', value: 'track {{ event.userId }}' }, { label: 'Cancel', value: 'cancel' }],
      } },
      { type: 'say', payload: { type: 'location', latitude: 45.5, longitude: -73.5, title: 'Depot {{ vars.missing }}!', address: '{{ [1, 2] }} / {{ ({ a: 1 }) }} / {{ null }}' } },
    ] } },
  },
  adder: {
    trigger: { type: 'message', pattern: '^add (\\d+) (\\d+)$', flags: 'i' },
    start: 'compute',
    nodes: {
      compute: { cards: [
        { type: 'say', text: 'TRIGGER {{ JSON.stringify(event.trigger) }}' },
        { type: 'action', action: 'add', output: 'result', input: {
          a: '{{ Number(event.preview.split(" ")[1]) }}', b: '{{ Number(event.preview.split(" ")[2]) }}', note: 'asked by {{ event.userId }}',
        } },
        { type: 'action', action: 'whoami', output: 'who' },
        { type: 'action', action: 'fail', output: 'never' },
        { type: 'say', text: 'RESULT {{ JSON.stringify({ result: vars.result, who: vars.who, never: vars.never === undefined }) }}' },
      ] },
    },
  },
  shipped: {
    trigger: [{ type: 'event', name: 'order.shipped' }, { type: 'event', name: 'order.lost' }],
    nodes: { main: { cards: [
      { type: 'say', text: 'TRIGGER {{ JSON.stringify(event.trigger) }}' },
      { type: 'say', text: 'shipped {{ event.payload.orderId }} ({{ event.type }})' },
    ] } },
  },
  age: {
    trigger: { type: 'message', text: 'age' },
    nodes: {
      ask: { cards: [
        { type: 'capture', variable: 'age', prompt: 'How old are you?', validate: { type: 'number' }, retryPrompt: 'A number please.', maxRetries: 1 },
        { type: 'transition', conditions: [{ when: 'vars.age === undefined', to: 'gaveUp' }, { when: 'vars.age >= 18', to: 'adult' }], else: 'minor' },
        { type: 'say', text: 'never said: transitions jump' },
      ] },
      adult: { cards: [{ type: 'say', text: 'adult {{ vars.age }} ({{ typeof vars.age }})' }], next: 'bye' },
      minor: { cards: [{ type: 'say', text: 'minor {{ vars.age }}' }], next: 'bye' },
      gaveUp: { cards: [{ type: 'say', text: 'gave up, age is {{ String(vars.age) }}' }] },
      bye: { cards: [{ type: 'say', text: 'bye from {{ event.trigger ? event.trigger.flowId : "a resumed flow" }}' }] },
    },
  },
  contact: {
    trigger: { type: 'message', text: 'contact' },
    nodes: { ask: { cards: [
      { type: 'capture', variable: 'email', prompt: { type: 'text', text: 'Your email, {{ event.userId }}?' }, validate: { type: 'email' } },
      { type: 'capture', variable: 'code', prompt: 'Your code (AB1234)?', validate: { type: 'pattern', pattern: '^[A-Z]{2}\\d{4}$', flags: 'i' }, maxRetries: 3 },
      { type: 'capture', variable: 'note', prompt: 'Any note?' },
      { type: 'say', text: 'CONTACT {{ JSON.stringify({ email: vars.email, code: vars.code, note: vars.note }) }}' },
    ] } },
  },
  count: {
    trigger: { type: 'message', text: 'count' },
    nodes: { main: { cards: [
      { type: 'execute', code: 'const { messages } = await client.listMessages({}); vars.count = messages.length; state.conversation.counted = (state.conversation.counted || 0) + 1; const r = await actions.add({ a: 40, b: 2 }); vars.answer = r.sum; await client.createMessage({ payload: { type: "text", text: "exec sees " + event.preview } })' },
      { type: 'execute', code: 'throw new Error("execute failed on purpose")' },
      { type: 'say', text: 'COUNT {{ JSON.stringify({ count: vars.count, counted: state.conversation.counted, answer: vars.answer }) }}' },
    ] } },
  },
  ending: {
    trigger: { type: 'message', pattern: '^end' },
    nodes: {
      a: { cards: [{ type: 'say', text: 'before the end' }, { type: 'end' }, { type: 'say', text: 'after the end' }], next: 'b' },
      b: { cards: [{ type: 'say', text: 'node b' }] },
    },
  },
  chain: {
    trigger: { type: 'message', text: 'chain' },
    nodes: {
      one: { cards: [{ type: 'execute', code: 'vars.path = ["one"]' }], next: 'two' },
      two: { cards: [{ type: 'execute', code: 'vars.path.push("two")' }, { type: 'transition', conditions: [{ when: 'vars.nope.deeper', to: 'one' }], else: 'three' }] },
      three: { cards: [{ type: 'say', text: 'path {{ vars.path.join(">") }}' }] },
    },
  },
}
`

type Trigger = { flowId: string; nodeId: string; eventName: string; conversationId: string; userId: string; integration: string }

describe('runtime: actions, cards and triggers', () => {
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
  })
  afterAll(async () => h?.close())

  /** A conversation whose conversationStarted greeting (sent when it was created) has arrived. */
  async function started(): Promise<Talk> {
    const talk = await Talk.open(bot, { userId: uid('wf') })
    await talk.botCount(2)
    return talk
  }

  const triggerOf = (talk: Talk, flowId: string, nodeId: string, eventName: string): Trigger => ({
    flowId, nodeId, eventName, conversationId: talk.conversationId, userId: talk.user.user.id, integration: 'chat',
  })

  it('trigger conversationStarted: fires when the conversation is created, before the user sends anything; messages never fire it', async () => {
    const talk = await Talk.open(bot, { userId: uid('first') })
    try {
      const [welcome, trig] = (await talk.botCount(2)).map(textOf)
      expect(welcome).toBe(`welcome ${talk.user.user.id}`)
      expect(jsonAfter<Trigger>(trig!, 'TRIGGER ')).toEqual(triggerOf(talk, 'welcome', 'hi', 'conversationStarted'))
      expect(talk.messages.filter((m) => !m.isBot)).toEqual([])
      // the first message is the user's, not the greeting's: it reaches the triggers that match it
      const replies = await talk.ask('Order Status', 3)
      expect(jsonAfter<Trigger>(textOf(replies[0]!), 'TRIGGER ')).toEqual(triggerOf(talk, 'status', 'main', 'message'))
      await talk.say('anything again')
      expect(await talk.quiet(400)).toEqual([])
      expect(talk.botTexts().filter((t) => t.startsWith('welcome'))).toHaveLength(1)
    } finally {
      await talk.close()
    }
  })

  it('trigger conversationStarted: a custom event sent first does not fire it again', async () => {
    const talk = await Talk.open(bot, { userId: uid('ev-first') })
    try {
      await talk.botCount(2)
      await talk.event({ name: 'hello' })
      expect(await talk.quiet(400)).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('trigger conversationStarted: a conversation opened with getOrCreateConversation is greeted once', async () => {
    const user = await Talk.open(bot, { userId: uid('goc') })
    await user.close()
    const id = uid('conv')
    const talk = await Talk.open(bot, { user: user.user, conversationId: id, history: true })
    try {
      await talk.botCount(2)
      const again = await Talk.open(bot, { user: user.user, conversationId: id })
      await again.close()
      expect(await talk.quiet(400)).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('trigger message text (trimmed, any case) and a say card with templates in every string of any payload', async () => {
    const talk = await started()
    try {
      const replies = await talk.ask('  oRDER sTATUS ', 3)
      expect(jsonAfter<Trigger>(textOf(replies[0]!), 'TRIGGER ')).toEqual(triggerOf(talk, 'status', 'main', 'message'))
      expect(replies[1]!.payload).toEqual({
        type: 'choice', text: 'Status for ORDER STATUS?',
        options: [{ label: 'Track 2', value: `track ${talk.user.user.id}` }, { label: 'Cancel', value: 'cancel' }],
      })
      // numbers stay numbers; undefined/null render empty; objects and arrays as JSON
      expect(replies[2]!.payload).toEqual({ type: 'location', latitude: 45.5, longitude: -73.5, title: 'Depot !', address: '[1,2] / {"a":1} / ' })
      // a message that only contains the text does not match
      await talk.say('order status please')
      expect(await talk.quiet(400)).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('trigger message pattern and action cards: templated input keeps types, output in vars, a failing action is recorded and skipped', async () => {
    const talk = await started()
    try {
      const [trig, result] = await talk.askText('ADD 20 22', 2)
      expect(jsonAfter<Trigger>(trig!, 'TRIGGER ')).toEqual(triggerOf(talk, 'adder', 'compute', 'message'))
      expect(jsonAfter(result!, 'RESULT ')).toEqual({
        result: { sum: 42, types: ['number', 'number'], note: `asked by ${talk.user.user.id}` },
        who: { userId: talk.user.user.id, conversationId: talk.conversationId, sameState: true, trigger: triggerOf(talk, 'adder', 'compute', 'message') },
        never: true,
      })
      await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes('workflows.adder.nodes.compute.cards[3] (action)') && l.message.includes('action failed on purpose'))
      // not matching the pattern: nothing
      await talk.say('add two and two')
      expect(await talk.quiet(400)).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('trigger custom event by name (payload.name or payload.type, any of several triggers)', async () => {
    const talk = await started()
    try {
      await talk.event({ name: 'order.shipped', orderId: 'A-1' })
      let replies = (await talk.botCount(4)).slice(2).map(textOf)
      expect(jsonAfter<Trigger>(replies[0]!, 'TRIGGER ')).toEqual(triggerOf(talk, 'shipped', 'main', 'order.shipped'))
      expect(replies[1]).toBe('shipped A-1 (custom)')
      await talk.event({ type: 'order.lost', orderId: 'B-2' })
      replies = (await talk.botCount(6)).slice(4).map(textOf)
      expect(jsonAfter<Trigger>(replies[0]!, 'TRIGGER ')).toEqual(triggerOf(talk, 'shipped', 'main', 'order.lost'))
      expect(replies[1]).toBe('shipped B-2 (custom)')
      // another name, and a message with the name as text: no trigger
      await talk.event({ name: 'order.unknown' })
      await talk.say('order.shipped')
      expect(await talk.quiet(400)).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('capture with number validation, a retry, transitions and next', async () => {
    const talk = await started()
    try {
      expect(await talk.askText('age')).toEqual(['How old are you?'])
      expect(await talk.askText('old enough')).toEqual(['A number please.'])
      // a custom event does not answer the capture
      await talk.event({ name: 'noise' })
      expect(await talk.quiet(300)).toEqual([])
      expect(await talk.askText(' 42 ', 2)).toEqual(['adult 42 (number)', 'bye from a resumed flow'])

      expect(await talk.askText('age')).toEqual(['How old are you?'])
      expect(await talk.askText('12,5', 2)).toEqual(['minor 12.5', 'bye from a resumed flow'])
    } finally {
      await talk.close()
    }
  })

  it('capture: after maxRetries invalid answers the flow goes on with the variable undefined', async () => {
    const talk = await started()
    try {
      expect(await talk.askText('age')).toEqual(['How old are you?'])
      expect(await talk.askText('no')).toEqual(['A number please.'])
      expect(await talk.askText('still no')).toEqual(['gave up, age is undefined'])
      // the flow is over: the next message is a normal one again
      expect(await talk.askText('age')).toEqual(['How old are you?'])
    } finally {
      await talk.close()
    }
  })

  it('capture: email and pattern validation, payload prompts, the answer to one capture is not taken as a trigger', async () => {
    const talk = await started()
    try {
      expect(await talk.askText('contact')).toEqual([`Your email, ${talk.user.user.id}?`])
      expect(await talk.askText('not-an-email')).toEqual([`Your email, ${talk.user.user.id}?`])
      expect(await talk.askText('ann@example.com')).toEqual(['Your code (AB1234)?'])
      expect(await talk.askText('ABC123')).toEqual(['Your code (AB1234)?'])
      expect(await talk.askText('xy9876')).toEqual(['Any note?'])
      // "age" is a trigger text, but a waiting capture takes the message first
      expect(jsonAfter(((await talk.askText('age')))[0]!, 'CONTACT ')).toEqual({ email: 'ann@example.com', code: 'xy9876', note: 'age' })
    } finally {
      await talk.close()
    }
  })

  it('execute cards: client, actions, event, state and vars in scope; a throwing card is recorded and the flow goes on', async () => {
    const talk = await started()
    try {
      const replies = await talk.askText('count', 2)
      expect(replies[0]).toBe('exec sees count')
      // listMessages saw: welcome, trigger dump, count
      expect(jsonAfter(replies[1]!, 'COUNT ')).toEqual({ count: 3, counted: 1, answer: 42 })
      await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes('workflows.count.nodes.main.cards[1] (execute)') && l.message.includes('execute failed on purpose'))
      const again = await talk.askText('count', 2)
      expect(jsonAfter(again[1]!, 'COUNT ')).toMatchObject({ counted: 2 })
    } finally {
      await talk.close()
    }
  })

  it('end cards stop the flow: the following cards and next are skipped', async () => {
    const talk = await started()
    try {
      expect(await talk.askText('end now')).toEqual(['before the end'])
      expect(await talk.quiet(400)).toEqual([])
    } finally {
      await talk.close()
    }
  })

  it('next and transition else; a condition that throws counts as false', async () => {
    const talk = await started()
    try {
      expect(await talk.askText('chain')).toEqual(['path one>two'])
      await waitForLog(h, bot.id, (l) => l.level === 'error' && l.message.includes('workflows.chain.nodes.two.cards[1] (transition) conditions[0]'))
    } finally {
      await talk.close()
    }
  })

  it('actions called from a hook: results, messages sent by actions, ctx, nested actions, a rejection caught by the caller', async () => {
    const talk = await started()
    try {
      const [notified, result] = await talk.askText('hook-actions', 2)
      expect(notified).toBe('notified: from the hook')
      expect(jsonAfter(result!, 'ACTIONS ')).toEqual({
        add: { sum: 5, types: ['number', 'number'] },
        notified: 'string',
        who: { userId: talk.user.user.id, conversationId: talk.conversationId, sameState: true, trigger: null },
        nested: { sum: 42, types: ['number', 'number'] },
        error: 'action failed on purpose',
      })
    } finally {
      await talk.close()
    }
  })
})
