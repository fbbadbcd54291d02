/**
 * Deploying bot code with the official admin client: code that does not load is refused with
 * 400 InvalidPayload naming the reason (and the line, for errors at a place in the source), the
 * previous code keeps answering, and a new version is used as soon as it is deployed.
 */
import { InvalidPayloadError, isApiError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, createBot, deploy, Talk, waitForLog, STREAM_CONFIG, type TestBot } from './helpers.js'

const version = (v: string) => String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: '${v}: ' + event.payload.text } })
  },
}
`

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<{ type: string; code: number; message: string }> {
  try {
    await promise
  } catch (err) {
    expect(isApiError(err)).toBe(true)
    return err as { type: string; code: number; message: string }
  }
  throw new Error('expected the call to be refused')
}

/** Code that does not load, the reason the message must give, and the line when there is one. */
const BROKEN: Array<{ name: string; code: string; reason: RegExp; line?: number }> = [
  {
    name: 'a syntax error',
    code: 'export const hooks = {\n  afterIncoming() {\n    let x = ;\n  },\n}\n',
    reason: /SyntaxError/,
    line: 3,
  },
  {
    name: 'a runtime throw at module top',
    code: 'const ok = 1\nthrow new Error("boom at the top")\nexport const hooks = {}\n',
    reason: /boom at the top/,
    line: 2,
  },
  {
    name: 'a ReferenceError at module top',
    code: 'const ok = 1\n\nundefinedThing.call()\nexport const hooks = {}\n',
    reason: /ReferenceError.*undefinedThing/,
    line: 3,
  },
  {
    name: 'a TypeError inside a function called at module top',
    code: 'function setup() {\n  return null.x\n}\nsetup()\nexport const hooks = {}\n',
    reason: /TypeError/,
    line: 2,
  },
  {
    name: 'an invalid workflows shape (trigger type)',
    code: "export const workflows = { onboarding: { trigger: { type: 'timer' }, nodes: { a: { cards: [] } } } }\n",
    reason: /workflows\.onboarding\.trigger\.type must be one of conversationStarted, message, event, got "timer"/,
  },
  {
    name: 'an invalid workflows shape (not an object)',
    code: 'export const workflows = 42\n',
    reason: /workflows must be an object/,
  },
  {
    name: 'a transition to an unknown node',
    code: "export const workflows = { f: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'transition', conditions: [{ when: 'true', to: 'nowhere' }] }] } } } }\n",
    reason: /workflows\.f\.nodes\.a\.cards\[0\]\.conditions\[0\]\.to: no node "nowhere"/,
  },
  {
    name: 'an unknown card property',
    code: "export const workflows = { f: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'capture', varible: 'x' }] } } } }\n",
    reason: /workflows\.f\.nodes\.a\.cards\[0\] \(capture\): unknown property "varible"/,
  },
  {
    name: 'an invalid template',
    code: "export const workflows = { f: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'say', text: 'hi {{ vars.name' }] } } } }\n",
    reason: /workflows\.f\.nodes\.a\.cards\[0\]\.text: invalid template/,
  },
  {
    name: 'execute code that does not compile',
    code: "export const workflows = { f: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'execute', code: 'let = ;' }] } } } }\n",
    reason: /workflows\.f\.nodes\.a\.cards\[0\]\.code: .*variable name expected/,
  },
  {
    name: 'an action card naming an unknown action',
    code: "export const actions = { refund() {} }\nexport const workflows = { f: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'action', action: 'charge' }] } } } }\n",
    reason: /unknown action "charge" \(actions: refund\)/,
  },
  {
    name: 'an unknown hook name',
    code: 'export const hooks = { beforeIncomming() {} }\n',
    reason: /hooks: unknown hook "beforeIncomming"/,
  },
  {
    name: 'a hook that is not a function',
    code: "export const hooks = { afterIncoming: 'nope' }\n",
    reason: /hooks\.afterIncoming must be a function, got a string/,
  },
  {
    name: 'an action that is not a function',
    code: 'export const actions = { notify: {} }\n',
    reason: /actions\.notify must be a function/,
  },
  {
    name: 'top-level await',
    code: 'await new Promise(() => {})\nexport const hooks = {}\n',
    reason: /top-level await/,
  },
  {
    name: 'an endless loop at module top',
    code: 'for (;;) {}\n',
    reason: /interrupted|too long|time/i,
  },
  {
    name: 'a huge allocation at module top',
    code: 'const big = new Array(1e9).fill(0)\n',
    reason: /memory/i,
  },
  {
    name: 'an import of another module',
    code: "import fs from 'fs'\nexport const hooks = {}\n",
    reason: /fs/,
  },
]

describe('runtime: deploying code', () => {
  let h: Harness
  let bot: TestBot
  let talk: Talk

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, sandboxLimits: { budgetMs: 1000, timeoutMs: 4000, memoryBytes: 64 * 1024 * 1024 } } })
    bot = await createBot(h, version('v1'))
    talk = await Talk.open(bot)
    expect(await talk.askText('hello')).toEqual(['v1: hello'])
  })
  afterAll(async () => {
    await talk?.close()
    await h?.close()
  })

  for (const broken of BROKEN) {
    it(`${broken.name}: 400 InvalidPayload with the reason${broken.line ? ' and the line' : ''}; the previous code keeps answering`, async () => {
      const err = await rejection(adminClient(h).updateBot({ id: bot.id, code: broken.code }))
      expect(err).toBeInstanceOf(InvalidPayloadError)
      expect(err.code).toBe(400)
      expect(err.type).toBe('InvalidPayload')
      expect(err.message).toMatch(broken.reason)
      if (broken.line !== undefined) expect(err.message).toMatch(new RegExp(`(bot\\.js:|line )${broken.line}\\b`))
      expect(await talk.askText(`still v1 after ${broken.name}`)).toEqual([`v1: still v1 after ${broken.name}`])
    })
  }

  it('createBot with code that does not load is refused too', async () => {
    const err = await rejection(adminClient(h).createBot({ name: 'broken at birth', code: 'export const hooks = {\n' }))
    expect(err.code).toBe(400)
    expect(err.message).toMatch(/SyntaxError/)
  })

  it('a new version answers as soon as updateBot returns; the old one never again', async () => {
    await deploy(h, bot.id, version('v2'))
    expect(await talk.askText('after v2')).toEqual(['v2: after v2'])
    await deploy(h, bot.id, version('v3'))
    expect(await talk.askText('after v3')).toEqual(['v3: after v3'])
    expect(talk.botTexts().filter((t) => t.startsWith('v1') && t.includes('after v'))).toEqual([])
    await deploy(h, bot.id, version('v1'))
  })

  it('redeploying code without the capture a conversation waits on drops the wait', async () => {
    const other = await createBot(h, String.raw`
      export const workflows = { ask: { trigger: { type: 'message', text: 'ask' }, nodes: { a: { cards: [
        { type: 'capture', variable: 'x', prompt: 'x?' }, { type: 'say', text: 'got {{ vars.x }}' },
      ] } } } }
    `)
    const t = await Talk.open(other)
    try {
      expect(await t.askText('ask')).toEqual(['x?'])
      await deploy(h, other.id, version('fresh'))
      expect(await t.askText('the answer')).toEqual(['fresh: the answer'])
      await waitForLog(h, other.id, (l) => l.level === 'warn' && /does not match the deployed workflows/.test(l.message))
    } finally {
      await t.close()
    }
  })
})

describe('runtime: the bot\'s maxExecutionTime', () => {
  let h: Harness

  beforeAll(async () => {
    // default limits: 5 s per hook
    h = await startParley({ listen: true, config: STREAM_CONFIG })
  })
  afterAll(async () => h?.close())

  it('overrides the default per-hook budget (updateBot({ maxExecutionTime }) in seconds, as in Botpress)', async () => {
    const bot = await createBot(h)
    await adminClient(h).updateBot({
      id: bot.id,
      maxExecutionTime: 1,
      code: String.raw`
        export const hooks = {
          async afterIncoming({ event, client }) {
            if (event.payload.text === 'spin') for (;;) {}
            await client.createMessage({ payload: { type: 'text', text: 'ok ' + event.payload.text } })
          },
        }
      `,
    })
    const talk = await Talk.open(bot)
    try {
      const t0 = Date.now()
      await talk.say('spin')
      expect(await talk.askText('after')).toEqual(['ok after'])
      expect(Date.now() - t0).toBeLessThan(1000 + 1500)
    } finally {
      await talk.close()
    }
  })
})
