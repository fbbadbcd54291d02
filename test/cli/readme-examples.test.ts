/**
 * The README's code samples, run as a newcomer would run them (the code blocks are read from README.md itself, so
 * a sample that goes stale fails here): the first conversation with `@botpress/chat` in a child Node.js process, the
 * first bot deployed with the real `parley deploy` and talked to, and "Bring a Botpress bot" with an unchanged
 * `@botpress/sdk` bot as a child process. Only the lines a reader fills in are substituted: `credentials` (their
 * data/credentials.json), and the comment that says to start the SDK program (started here, on a free port).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codeBlocks } from '../helpers/doc-samples.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { startSdkBot, type SdkBot } from '../helpers/sdk-bot.js'
import { Talk } from '../runtime/helpers.js'
import { ensureBuilt, ROOT, runCli } from './helpers.js'

/** The README's fenced code blocks of one language, in order. */
const readmeBlocks = (lang: string): string[] => codeBlocks('README.md', lang).map((b) => b.code)

/** A new conversation with the bot behind a chat webhook URL, through the official chat client. */
const talkTo = (chatUrl: string) => Talk.open({ url: chatUrl, encryptionKey: '' })

let h: Harness
let work: string
const sdkBots: SdkBot[] = []

describe("the README's samples", () => {
  beforeAll(async () => {
    ;[h] = await Promise.all([startParley({ listen: true, demoBot: true }), ensureBuilt()])
    // Under the repository, so the samples resolve @botpress/chat and @botpress/client from its node_modules.
    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true })
    work = mkdtempSync(join(ROOT, 'test-artifacts', 'readme-'))
  }, 180_000)
  afterAll(async () => {
    for (const bot of sdkBots) await bot.stop()
    await h?.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('the first conversation: the chat client sample, run by Node.js, prints the demo bot\'s answer', async () => {
    const block = readmeBlocks('js').find((b) => b.includes("from '@botpress/chat'"))
    expect(block, 'README has the @botpress/chat sample').toBeDefined()
    const file = join(work, 'first-conversation.mjs')
    writeFileSync(file, `const credentials = ${JSON.stringify(h.credentials)}\n${block}`)
    const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    try {
      const deadline = Date.now() + 20_000
      while (!(/^me: /m.test(out) && /^bot: /m.test(out)) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      // console.log prints the payloads with util.inspect
      expect(out, out).toMatch(/^me: \{ type: 'text', text: 'hello' \}/m)
      expect(out, out).toMatch(/^bot: \{\s+type: 'text',\s+text: 'Hi! I am the Parley demo bot/m)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('the first bot: `parley deploy my-bot.ts` of the README\'s bot, then its workflow and its hook answer', async () => {
    const block = readmeBlocks('ts').find((b) => b.startsWith('// my-bot.ts'))
    expect(block, 'README has the my-bot.ts sample').toBeDefined()
    const file = join(work, 'my-bot.ts')
    writeFileSync(file, block!)
    const result = await runCli(['deploy', file, '--data-dir', h.dataDir])
    expect(result.code, result.stderr).toBe(0)
    const botId = result.stdout.trim()
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    const { bot } = await admin.getBot({ id: botId })
    expect(bot.name).toBe('my-bot')
    const talk = await talkTo(bot.integrations.chat!.webhookUrl)
    expect(await talk.askText('Hello')).toEqual(['Hello! What is your name?'])
    expect(await talk.askText('Ada')).toEqual(['Nice to meet you, Ada.'])
    expect(await talk.askText('good day')).toEqual(['You said: good day (#1)'])
    expect(await talk.askText('again')).toEqual(['You said: again (#2)'])
    await talk.close()
  })

  it('bring a Botpress bot: the README\'s admin calls, with an unchanged @botpress/sdk echo bot started where the comment says', async () => {
    const block = readmeBlocks('ts').find((b) => b.includes("from '@botpress/client'"))
    expect(block, 'README has the Bring a Botpress bot sample').toBeDefined()
    const startLine = /^\/\/ BP_API_URL=.*node bot\.js$/m
    expect(block).toMatch(startLine)
    expect(block).toContain("url: 'http://127.0.0.1:8072/'")
    // The reader's parts: the import (a module here), their credentials, their program on its port.
    const body = block!
      .replace(/^import \{ Client \} from '@botpress\/client'\n/m, '')
      .replace(startLine, 'const started = await startBot(bot.id, value)')
      .replace("url: 'http://127.0.0.1:8072/'", 'url: started.url')
      .concat('\nreturn bot')
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<{ id: string }>
    const run = new AsyncFunction('Client', 'credentials', 'startBot', body)
    const credentials = { ...h.credentials, apiUrl: h.baseUrl }
    const created = await run(Client, credentials, async (botId: string, token: string) => {
      const sdkBot = await startSdkBot('echo-bot.mjs', { apiUrl: h.baseUrl, token, botId })
      sdkBots.push(sdkBot)
      await sdkBot.start()
      return sdkBot
    })
    const admin = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
    const { bot } = await admin.getBot({ id: created.id })
    expect(bot.name).toBe('my-sdk-bot')
    const talk = await talkTo(bot.integrations.chat!.webhookUrl)
    expect(await talk.askText('hi there')).toEqual(['echo #1: hi there'])
    await talk.close()
  })
})
