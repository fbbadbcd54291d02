/**
 * Every JavaScript sample of docs/bot-code.md (and the bot samples of docs/tables.md and docs/console.md), read from
 * the page itself, deployed to a real Parley's sandbox, and the complete bots talked to with the official chat client:
 * - a whole module is deployed as it is (the deploy refuses code that does not load, unknown workflow properties and
 *   template syntax errors);
 * - a card, or a list of cards, is deployed inside a workflow (nodes its transitions name are added);
 * - statements (a client call) are deployed as the body of `afterIncoming`, and run when they need nothing outside;
 * - the event.trigger shape is compared with the one a real trigger produces.
 * A new block must be classified here, or the first test fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codeBlocks, type CodeBlock } from '../helpers/doc-samples.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, createBot, deploy, Talk, waitForLog } from '../runtime/helpers.js'

const BOT_CODE = codeBlocks('docs/bot-code.md', 'js')
const sample = (heading: string, page: CodeBlock[] = BOT_CODE): CodeBlock => {
  const found = page.filter((b) => b.heading === heading)
  if (found.length !== 1) throw new Error(`expected one js sample under "${heading}", found ${found.length}`)
  return found[0]!
}

/** Headings whose sample is a whole module, a card (or cards), or statements. */
const MODULES = ['Writing bot code', 'A first bot', 'Hooks', 'Actions', 'Workflows', 'agent', 'Guardrails', 'Echo, with moderation and a signature', 'Showing each payload type on request', 'A small workflow with a capture and branches']
const CARDS = ['say', 'execute', 'action', 'transition', 'knowledge', 'Capture']
const STATEMENTS = ['The client', 'Webhook events', 'Knowledge']
const SHAPES = ['Triggers']

/** Cards as a module: one workflow whose node holds them, with the nodes and action they refer to. */
function cardsModule(code: string): string {
  // A sample may list several cards one after the other (not an array): join them into one.
  const list = code.replace(/\}(\s*(?:\/\/[^\n]*)?)\n\{/g, '},$1\n{')
  return `export const actions = { async lookupOrder(ctx, input) { return { status: 'shipped', input } } }
export const workflows = {
  sample: {
    trigger: { type: 'event', name: 'sample' },
    nodes: {
      main: { cards: [
${list}
      ] },
      adult: { cards: [{ type: 'say', text: 'adult' }] },
      minor: { cards: [{ type: 'say', text: 'minor' }] },
      end: { cards: [{ type: 'say', text: 'end' }] },
    },
  },
}
`
}

const statementsModule = (code: string) => `export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
${code}
  },
}
`

let h: Harness

describe('docs/bot-code.md samples', () => {
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  it('every js sample of the page is classified here (a new one needs its check)', () => {
    const known = new Set([...MODULES, ...CARDS, ...STATEMENTS, ...SHAPES])
    expect(BOT_CODE.map((b) => b.heading).filter((heading) => !known.has(heading))).toEqual([])
    expect(BOT_CODE.length).toBe(known.size)
  })

  it('every module, card and statement sample deploys (the sandbox loads it and checks the workflows)', async () => {
    const bot = await createBot(h)
    const refused: string[] = []
    for (const block of BOT_CODE) {
      if (SHAPES.includes(block.heading)) continue
      const code = MODULES.includes(block.heading) ? block.code : CARDS.includes(block.heading) ? cardsModule(block.code) : statementsModule(block.code)
      try {
        await deploy(h, bot.id, code)
      } catch (err) {
        refused.push(`line ${block.line} (${block.heading}): ${(err as Error).message}`)
      }
    }
    expect(refused).toEqual([])
  })

  it('A first bot: answers what you said', async () => {
    const bot = await createBot(h, sample('A first bot').code)
    const talk = await Talk.open(bot)
    expect(await talk.askText('hello')).toEqual(['You said: hello'])
    await talk.close()
  })

  it('The client: the image message sample sends an image', async () => {
    const bot = await createBot(h, statementsModule(sample('The client').code))
    const talk = await Talk.open(bot)
    const [reply] = await talk.ask('a picture please')
    expect(reply!.payload).toMatchObject({ imageUrl: 'https://example.com/cat.png' })
    await talk.close()
  })

  it('Workflows: the onboarding flow greets when the conversation starts and captures the name', async () => {
    const bot = await createBot(h, sample('Workflows').code)
    const talk = await Talk.open(bot)
    await talk.botCount(2)
    expect(talk.botTexts()).toEqual(['Hi! I am the demo bot.', 'What is your name?'])
    expect(await talk.askText('Grace')).toEqual(['Nice to meet you, Grace!'])
    await talk.close()
  })

  it('Triggers: event.trigger has exactly the fields the sample shows', async () => {
    const shape = sample('Triggers').code
    const documented = Object.keys(new Function('conversationId', 'userId', 'integration', `return (${shape})`)('c', 'u', 'i') as object)
    const bot = await createBot(h, `export const workflows = { onboarding: { trigger: { type: 'message', text: 'go' }, nodes: { hello: { cards: [{ type: 'say', text: 'hi' }] } } } }
export const hooks = { afterIncoming({ event }) { if (event.trigger) console.log('trigger ' + JSON.stringify(Object.keys(event.trigger))) } }`)
    const talk = await Talk.open(bot)
    await talk.say('go')
    const log = await waitForLog(h, bot.id, (l) => l.message.startsWith('trigger '))
    expect(JSON.parse(log.message.slice('trigger '.length))).toEqual(documented)
    await talk.close()
  })

  it('Echo, with moderation and a signature: counts, signs, and drops banned words', async () => {
    const bot = await createBot(h, sample('Echo, with moderation and a signature').code)
    const talk = await Talk.open(bot)
    expect(await talk.askText('hello')).toEqual(['#1: hello — echo bot'])
    await talk.say('this is spam')
    expect(await talk.askText('again')).toEqual(['#2: again — echo bot'])
    await talk.close()
  })

  it('Showing each payload type on request: `show card` and `show location`', async () => {
    const bot = await createBot(h, sample('Showing each payload type on request').code)
    const talk = await Talk.open(bot)
    expect((await talk.ask('show card'))[0]!.payload).toMatchObject({ type: 'card', title: 'A card' })
    expect((await talk.ask('show location'))[0]!.payload).toMatchObject({ type: 'location', title: 'Eiffel Tower' })
    expect(await talk.askText('show nothing')).toEqual(['I can show: image, card, choice, location'])
    await talk.close()
  })

  it('A small workflow with a capture and branches: a booking to the end, and a cancelled one', async () => {
    const bot = await createBot(h, sample('A small workflow with a capture and branches').code)
    const talk = await Talk.open(bot)
    expect(await talk.askText('book')).toEqual(['For how many people?'])
    expect(await talk.askText('two')).toEqual(['A number please (e.g. 2).'])
    expect(await talk.askText('2')).toEqual(['How many nights?'])
    const [offer] = await talk.ask('3')
    expect(offer!.payload).toMatchObject({ type: 'choice', text: '2 people, 3 nights: 480 €. Confirm?' })
    expect(await talk.askText('yes')).toEqual(['Booked! See you soon.'])
    expect(await talk.askText('book')).toEqual(['For how many people?'])
    await talk.ask('1')
    await talk.ask('1')
    expect(await talk.askText('no')).toEqual(['No problem, nothing was booked.'])
    await talk.close()
  })
})

describe('bot samples of docs/tables.md and docs/console.md', () => {
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  it('tables.md: the orders bot keeps a table and answers the sums per item', async () => {
    const [block] = codeBlocks('docs/tables.md', 'js')
    const bot = await createBot(h, block!.code)
    const talk = await Talk.open(bot)
    expect(await talk.askText('order apple 2')).toEqual(['apple: 2'])
    expect(await talk.askText('order apple 3')).toEqual(['apple: 5'])
    expect((await talk.askText('order pear 1'))[0]!.split(', ').sort()).toEqual(['apple: 5', 'pear: 1'])
    await talk.close()
  })

  it('console.md: the handoff calls run in a hook, and the handoff card deploys', async () => {
    const [block] = codeBlocks('docs/console.md', 'js')
    const [calls, card] = block!.code.split(/\n(?=\/\/ or a workflow card)/) as [string, string]
    const bot = await createBot(h, statementsModule(`${calls}\nawait client.createMessage({ payload: { type: 'text', text: 'handoff ' + handoff.status } })`))
    const talk = await Talk.open(bot)
    const [reply] = await talk.askText('human please')
    expect(reply).toMatch(/^handoff \w+/)
    const { handoffs } = await (await fetch(`${h.baseUrl}/v1/admin/bots/${bot.id}/handoffs`, { headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId } })).json() as { handoffs: Array<{ status: string }> }
    expect(handoffs.map((x) => x.status)).toEqual(['ended'])
    await talk.close()
    await deploy(h, bot.id, cardsModule(card.replace(/^\/\/.*\n/, '')))
    expect((await adminClient(h).getBot({ id: bot.id })).bot.id).toBe(bot.id)
  })
})
