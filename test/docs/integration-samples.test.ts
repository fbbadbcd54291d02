/**
 * The manual's samples for programs around Parley, read from the pages themselves:
 * - docs/sdk-bots.md's signature check (`fromParley`) accepts a real delivery of Parley's to a bot's `url` (a plain
 *   loopback server records it) and refuses it tampered, with another secret, or too old;
 * - docs/webchat.md's `updateBot` with webchat settings, run with the official admin client, changes what the bot's
 *   webchat settings answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@botpress/client'
import { startBotReceiver, type BotReceiver } from '../helpers/bot-receiver.js'
import { codeBlocks } from '../helpers/doc-samples.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, createBot, Talk } from '../runtime/helpers.js'

let h: Harness
let receiver: BotReceiver

type Verify = (secret: string, header: string, rawBody: string, toleranceSeconds?: number) => boolean

/** The page's sample as a function: its import line becomes the same names from node:crypto. */
async function fromParleySample(): Promise<Verify> {
  const [block] = codeBlocks('docs/sdk-bots.md', 'js')
  expect(block!.code).toMatch(/^import \{ createHmac, timingSafeEqual \} from 'node:crypto'\n/)
  const crypto = await import('node:crypto')
  const body = block!.code.replace(/^import .*\n/, '') + '\nreturn fromParley'
  return new Function('createHmac', 'timingSafeEqual', 'Buffer', body)(crypto.createHmac, crypto.timingSafeEqual, Buffer) as Verify
}

describe('docs samples for programs around Parley', () => {
  beforeAll(async () => {
    h = await startParley({ listen: true })
    receiver = await startBotReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await h?.close()
  })

  it('sdk-bots.md: fromParley accepts a real signed delivery and refuses it changed, with another secret, or stale', async () => {
    const fromParley = await fromParleySample()
    const bot = await createBot(h)
    const admin = adminClient(h)
    await admin.updateBot({ id: bot.id, url: receiver.url })
    const { bot: full } = await admin.getBot({ id: bot.id })
    const secret = (full as unknown as { signingSecret: string }).signingSecret
    const talk = await Talk.open(bot)
    await talk.say('signed?')
    await receiver.until((r) => r.some((x) => x.headers['x-bp-operation'] === 'event_received'), 'a delivery')
    const delivery = receiver.events()[0]!
    const header = String(delivery.headers['x-parley-signature'])
    expect(fromParley(secret, header, delivery.raw)).toBe(true)
    expect(fromParley(secret, header, delivery.raw.replace('signed?', 'forged!'))).toBe(false)
    expect(fromParley(`${secret}x`, header, delivery.raw)).toBe(false)
    expect(fromParley(secret, header.replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000) - 3600}`), delivery.raw)).toBe(false)
    await talk.close()
  })

  it('webchat.md: the updateBot sample sets the webchat settings the bot\'s webchat reads', async () => {
    const [block] = codeBlocks('docs/webchat.md', 'js')
    const bot = await createBot(h)
    const body = block!.code.replace(/^import \{ Client \} from '@botpress\/client'\n/, '')
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>
    await new AsyncFunction('Client', 'apiUrl', 'token', 'workspaceId', 'botId', body)(Client, h.baseUrl, h.credentials.token, h.credentials.workspaceId, bot.id)
    const res = await fetch(`${bot.url}/webchat`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ webchat: { botName: 'Ada', primaryColor: '#0b6e4f', launcherLabel: 'Help' } })
  })
})
