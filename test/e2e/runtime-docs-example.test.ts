/**
 * The manual's transcript-export example (examples/export-transcript.mjs, quoted in docs/runtime-api.md) runs
 * unchanged against a Parley with a bot API key and prints a conversation oldest first.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBotKey, runtimeClient } from '../helpers/runtime-client.js'

describe('e2e: the manual\'s transcript export', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  it('docs/runtime-api.md quotes the script verbatim, and the script prints every message of a 45-message conversation in order', async () => {
    const script = readFileSync('examples/export-transcript.mjs', 'utf8')
    expect(readFileSync('docs/runtime-api.md', 'utf8')).toContain('<!-- transcript-export -->\n```js\n' + script + '```')

    const bot = await runtimeClient(h)
    const { conversation } = await bot.createConversation({ channel: 'channel', tags: {} })
    const { user } = await bot.createUser({ tags: {} })
    for (let i = 0; i < 45; i++) {
      await bot.createMessage({ conversationId: conversation.id, userId: i % 2 ? h.credentials.botId : user.id, type: 'text', payload: { text: `line ${i}` }, tags: {} })
    }
    const key = await createBotKey(h)
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/export-transcript.mjs', conversation.id], {
      env: { ...process.env, PARLEY_URL: h.baseUrl, BOT_ID: h.credentials.botId, BOT_KEY: key.value },
    })
    const lines = stdout.trim().split('\n').map((l) => l.replace(/^\S+ /, ''))
    expect(lines).toEqual(Array.from({ length: 45 }, (_, i) => `${i % 2 ? 'bot' : user.id}: line ${i}`))
  })
})
