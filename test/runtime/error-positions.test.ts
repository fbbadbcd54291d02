/**
 * Bot failures name where in the bot's source they happened, read back with getBotLogs (official admin
 * client): `bot.js:LINE:COLUMN` of the deployed module for plain JavaScript deployed with updateBot,
 * and the original file's `my-bot.ts:LINE:COLUMN` for code bundled by `parley deploy` (esbuild, with an
 * inline source map the server reads).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleBot } from '../../src/cli/commands/deploy.js'
import { SourceMap } from '../../src/runtime/source-map.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, STREAM_CONFIG, Talk, waitForLog } from './helpers.js'

// QuickJS points at the parenthesis of the `Error(…)` call on line 4; mapped back through the source map it is the start of `Error` (column 13); line 10 calls explode.
const TS_BOT = `import { defineBot } from 'parley/sdk'

function explode(text: string): never {
  throw new Error(\`exploded on \${text}\`)
}

export default defineBot({
  hooks: {
    async afterIncoming({ event }) {
      if (event.type === 'text') explode(event.payload.text)
    },
  },
})
`

// Plain JavaScript: line 4, the property read on undefined.
const JS_BOT = `export const hooks = {
  async afterIncoming({ event }) {
    const missing = undefined
    return missing.field + event.type
  },
}
`

describe('runtime: bot failures carry a line:column of the bot\'s source', () => {
  let h: Harness
  let work: string

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, sandboxLimits: { budgetMs: 2000, timeoutMs: 10_000, memoryBytes: 64 * 1024 * 1024 } } })
    work = mkdtempSync(join(tmpdir(), 'parley-positions-'))
  })
  afterAll(async () => {
    await h?.close()
    rmSync(work, { recursive: true, force: true })
  })

  it('plain JavaScript deployed with updateBot: the failure names bot.js:LINE:COLUMN of the deployed code', async () => {
    const bot = await createBot(h, JS_BOT)
    const talk = await Talk.open(bot)
    try {
      await talk.say('hello')
      const log = await waitForLog(h, bot.id, (l) => l.message.startsWith('hooks.afterIncoming:'))
      expect(log.message).toMatch(/^hooks\.afterIncoming: cannot read property 'field' of undefined \(at bot\.js:4:\d+\)$/)
    } finally {
      await talk.close()
    }
  })

  it('TypeScript bundled as parley deploy does: the failure names my-bot.ts:4:13, where the hook threw', async () => {
    const entry = join(work, 'my-bot.ts')
    writeFileSync(entry, TS_BOT)
    const { code } = await bundleBot(entry)
    expect(SourceMap.fromCode(code)).toBeDefined()
    const bot = await createBot(h, code)
    const talk = await Talk.open(bot)
    try {
      await talk.say('hello')
      const log = await waitForLog(h, bot.id, (l) => l.message.startsWith('hooks.afterIncoming:'))
      expect(log.message).toBe('hooks.afterIncoming: exploded on hello (at my-bot.ts:4:13)')
    } finally {
      await talk.close()
    }
  })
})
