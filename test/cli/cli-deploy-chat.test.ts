import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatApi } from '../../src/webchat/shared/chat-api.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/runtime-client.js'
import { ensureBuilt, FIXTURES, runCli } from './helpers.js'

/** Talks to a bot through the Chat API: one message, then the bot's first answer. */
async function ask(chatUrl: string, text: string): Promise<string> {
  const api = new ChatApi(chatUrl)
  api.key = (await api.createUser({})).key
  const { conversation } = await api.createConversation()
  const { message } = await api.createMessage(conversation.id, { type: 'text', text })
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const { messages } = await api.listMessages(conversation.id)
    const reply = messages.find((m) => m.id !== message.id && m.userId !== message.userId)
    if (reply) return JSON.stringify(reply.payload)
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no answer to "${text}"`)
}

const getBot = async (id: string) => (await adminClient(h).getBot({ id })).bot

let h: Harness

describe('parley deploy and parley chat', () => {
  let dir: string[]
  let work: string

  beforeAll(async () => {
    ;[h] = await Promise.all([startParley({ listen: true }), ensureBuilt()])
    dir = ['--data-dir', h.dataDir]
    work = mkdtempSync(join(tmpdir(), 'parley-cli-work-'))
  }, 180_000)
  afterAll(async () => {
    await h?.close()
    rmSync(work, { recursive: true, force: true })
  })

  it('deploys a TypeScript bot (a folder, with local imports and the SDK) to a bot of its own, never the demo bot; --bot names the demo bot', async () => {
    const demoBefore = await getBot(h.credentials.botId)
    const result = await runCli(['deploy', join(FIXTURES, 'ts-bot'), ...dir])
    expect(result.code, result.stderr).toBe(0)
    const botId = result.stdout.trim()
    expect(botId).not.toBe(h.credentials.botId)
    expect(result.stderr).toMatch(/Bundling .*ts-bot[/\\]bot\.ts…/)
    expect(result.stderr).toMatch(/Bundled [\d.]+ k?B in \d+ ms \(exports: default\)/)
    expect(result.stderr).toContain(`Created bot ${botId} for bot.ts (the demo bot is left as it is`)
    expect(result.stderr).toContain(`Deploying to bot ${botId} at ${h.baseUrl}…`)
    expect(result.stderr).toMatch(/✓ Deployed "ts-bot" .* in \d+ ms/)
    const bot = await getBot(botId)
    expect(bot.tags).toEqual({ 'parley-deploy': join(FIXTURES, 'ts-bot', 'bot.ts') })
    expect(await ask(bot.integrations.chat!.webhookUrl, 'hello')).toContain('echo: hello')
    expect(await ask(bot.integrations.chat!.webhookUrl, 'ping')).toContain('pong') // its workflow
    // The demo bot was not touched.
    expect((await getBot(h.credentials.botId)).deployedAt).toBe(demoBefore.deployedAt)

    // Deploying the same file again updates the same bot (no second bot).
    const again = await runCli(['deploy', join(FIXTURES, 'ts-bot', 'bot.ts'), ...dir])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout.trim()).toBe(botId)
    expect(again.stderr).not.toContain('Created bot')

    // --bot deploys to the bot it names, the demo bot included.
    const demo = await runCli(['deploy', join(FIXTURES, 'ts-bot'), '--bot', h.credentials.botId, ...dir])
    expect(demo.code, demo.stderr).toBe(0)
    expect(demo.stdout.trim()).toBe(h.credentials.botId)
    expect(demo.stderr).toMatch(/✓ Deployed "Demo bot" .* in \d+ ms/)
    expect(demo.stderr).toContain(`Talk to it: ${h.credentials.chat.webchatUrl}`)
    expect(await ask(h.credentials.chat.url, 'hello')).toContain('echo: hello')
  })

  it('deploys a JavaScript bot that imports parley/sdk without installing it, to the bot named by --bot', async () => {
    const bot = JSON.parse((await runCli(['bots', 'create', '--name', 'JS bot', '--json', ...dir])).stdout) as { id: string; integrations: { chat: { webhookUrl: string } } }
    const result = await runCli(['deploy', join(FIXTURES, 'js-bot'), '--bot', bot.id, ...dir])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/Bundling .*js-bot[/\\]src[/\\]main\.js/) // package.json "main"
    expect(await ask(bot.integrations.chat.webhookUrl, 'hi')).toContain('js bot heard: hi')
    // PARLEY_BOT_ID names the bot too.
    const byEnv = await runCli(['deploy', join(FIXTURES, 'ts-bot', 'bot.ts'), ...dir], { env: { PARLEY_BOT_ID: bot.id } })
    expect(byEnv.stdout.trim()).toBe(bot.id)
  })

  it('--dry-run bundles without deploying; --outfile writes the bundle, one ES module without imports', async () => {
    const outfile = join(work, 'bundle.mjs')
    const result = await runCli(['deploy', join(FIXTURES, 'ts-bot'), '--dry-run', '--outfile', outfile], { cwd: work })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('dry run: nothing deployed')
    const code = readFileSync(outfile, 'utf8')
    expect(code).toContain('export {')
    expect(code).not.toMatch(/^\s*import\s/m)
    expect(code).toContain('Pick a colour') // ./menus.ts was bundled in
    // The bundle is a module Node can load, exporting the bot.
    const mod = (await import(outfile)) as { default: { hooks: object; actions: object; workflows: object } }
    expect(Object.keys(mod.default).sort()).toEqual(['actions', 'hooks', 'workflows'])
  })

  it('refuses code that does not load with the server\'s message, exit 1, and keeps the previous code live', async () => {
    const result = await runCli(['deploy', join(FIXTURES, 'bad-bot', 'bot.js'), '--bot', h.credentials.botId, ...dir])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('error: The server refused the code: Bot code does not load')
    expect(result.stderr).toContain('unknown hook "beforeIncomming"')
    expect(result.stderr).toContain('The previous code is still live')
    expect(await ask(h.credentials.chat.url, 'still there?')).toContain('echo: still there?')

    // Without --bot: the bot created for the file is removed again, nothing was deployed anywhere.
    const fresh = await runCli(['deploy', join(FIXTURES, 'bad-bot', 'bot.js'), ...dir])
    expect(fresh.code).toBe(1)
    expect(fresh.stderr).toContain('Nothing was deployed')
    const { bots } = await adminClient(h).listBots({})
    expect(bots.some((b) => b.tags['parley-deploy'] === join(FIXTURES, 'bad-bot', 'bot.js'))).toBe(false)

    const syntax = await runCli(['deploy', join(FIXTURES, 'bad-bot', 'syntax.js'), ...dir])
    expect(syntax.code).toBe(1)
    expect(syntax.stderr).toMatch(/Bundling .*syntax\.js failed:\n +.*syntax\.js:\d+:\d+: /)

    const node = await runCli(['deploy', join(FIXTURES, 'bad-bot', 'node-api.js'), ...dir])
    expect(node.code).toBe(1)
    expect(node.stderr).toMatch(/Could not resolve "node:fs" \(bot code runs in a sandbox without Node\.js APIs/)

    const unknownBot = await runCli(['deploy', join(FIXTURES, 'ts-bot'), '--bot', '00000000-0000-7000-8000-000000000000', ...dir])
    expect(unknownBot.code).toBe(1)
    expect(unknownBot.stderr).toContain('ResourceNotFound')
  })

  it('chat renders choices, cards, carousels and dropdowns as numbered options, picked by number', async () => {
    await runCli(['deploy', join(FIXTURES, 'ts-bot'), ...dir])
    const input = ['hello', 'choice', '2', 'card', '1', '3', 'carousel', '2', 'dropdown', '2', '/options', '/quit', 'never sent'].join('\n') + '\n'
    const result = await runCli(['chat', ...dir], { input, timeoutMs: 30_000 })
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.split('\n')
    const expected = [
      'you › hello',
      'bot › echo: hello',
      'you › choice',
      'bot › Pick a colour',
      '        1) Red',
      '        2) Green',
      'you › Green (green)',
      'bot › echo: green',
      'you › card',
      'bot › ▣ A card — with actions',
      '        1) Yes',
      '        2) Tell me more',
      '        3) Docs  ↗ https://example.com/docs',
      'you › Yes (yes)',
      'bot › echo: yes',
      'Open https://example.com/docs in your browser.',
      'you › carousel',
      'bot › ▣ 1/2 First',
      '        1) One',
      '      ▣ 2/2 Second',
      '        2) Two',
      'you › Two (two)',
      'bot › echo: two',
      'you › dropdown',
      'bot › Pick a country',
      '        1) Canada',
      '        2) Japan',
      'you › Japan (JP)',
      'bot › echo: JP',
      '  1) Canada',
      '  2) Japan',
    ]
    expect(lines.slice(0, expected.length)).toEqual(expected)
    expect(result.stdout).not.toContain('never sent')
  })

  it('chat finds a bot by --bot (Admin API) or talks to --chat-url directly; unknown ones fail with exit 1', async () => {
    const bot = JSON.parse((await runCli(['bots', 'create', '--name', 'Chat target', '--json', ...dir])).stdout) as { id: string; integrations: { chat: { webhookUrl: string } } }
    await runCli(['deploy', join(FIXTURES, 'js-bot'), '--bot', bot.id, ...dir])
    const byBot = await runCli(['chat', '--bot', bot.id, ...dir], { input: 'by id\n' })
    expect(byBot.code, byBot.stderr).toBe(0)
    expect(byBot.stdout).toContain('bot › js bot heard: by id')
    const byUrl = await runCli(['chat', '--chat-url', bot.integrations.chat.webhookUrl, '--name', 'Ann'], { input: 'by url\n' })
    expect(byUrl.stdout).toContain('bot › js bot heard: by url')

    const unknownBot = await runCli(['chat', '--bot', '00000000-0000-7000-8000-000000000000', ...dir], { input: '' })
    expect(unknownBot.code).toBe(1)
    const unknownUrl = await runCli(['chat', '--chat-url', `${h.baseUrl}/00000000-0000-4000-8000-000000000000`], { input: 'x\n' })
    expect(unknownUrl.code).toBe(1)
    expect(unknownUrl.stderr).toMatch(/No chat at .*unknown or disabled webhook/)
    const down = await runCli(['chat', '--chat-url', 'http://127.0.0.1:9/abc'], { input: 'x\n' })
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/Cannot reach[\s\S]*parley serve/)
  })
})
