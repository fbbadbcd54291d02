/**
 * @botpress/zai@2.6.21, unchanged, against Parley (issue #28): zai.check and zai.extract over both of
 * @botpress/cognitive's paths, in a child process (test/zai-env/run-zai.mts: zai needs @bpinternal/zui 2, the root's SDK
 * needs 1, so zai lives in its own npm workspace):
 * - legacy: zai with a plain @botpress/client Client, cognitive's default. It asks getBot for the bot "undefined" (the
 *   Client has no botId), lists the registered integrations' models (`<provider>:listLanguageModels`), saves its model
 *   preferences through the Files API, then calls `<provider>:generateContent`: the configured provider shown as an
 *   integration implementing the llm interface (docs/llm.md "The llm interface").
 * - v2: zai with `new Cognitive({ client, __experimental_beta: true })`: POST /v2/cognitive/generate-text only.
 * The provider is the LLM stand-in (test/helpers/llm-stand-in.ts: no model can run or be downloaded here, so a local
 * server speaks the OpenAI wire), scripted with zai's own sentinel protocol (■TRUE■ … ■END■, ■json_start■ … ■json_end■).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Harness } from '../helpers/harness.js'
import { parleyWithStandIn, recordedCalls, type LlmStandIn } from '../helpers/llm-stand-in.js'
import { createBotKey } from '../helpers/runtime-client.js'

const RUNNER = fileURLToPath(new URL('../zai-env/run-zai.mts', import.meta.url))
const TSX = fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url))

/** zai in a child process: resolves with the JSON line it printed. */
function runZai(args: string[]): Promise<{ check?: boolean; extract?: unknown; error?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, RUNNER, ...args], { cwd: fileURLToPath(new URL('../zai-env/', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c))
    child.stderr.on('data', (c: Buffer) => (err += c))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      const line = out.trim().split('\n').pop() ?? ''
      try {
        resolve(JSON.parse(line) as never)
      } catch {
        reject(new Error(`zai exited ${code} without its answer; stdout: ${out.slice(-2000)}; stderr: ${err.slice(-2000)}`))
      }
    })
  })
}

describe('@botpress/zai against Parley', () => {
  let llm: Awaited<ReturnType<typeof parleyWithStandIn>>
  let h: Harness
  let standIn: LlmStandIn
  let key: string

  beforeAll(async () => {
    llm = await parleyWithStandIn((url) => [{ name: 'local', kind: 'openai', url, apiKey: 'sk-zai', models: [{ name: 'small', tags: ['recommended', 'general-purpose'] }] }])
    ;({ h, standIn } = llm)
    key = (await createBotKey(h)).value
  })
  afterAll(() => llm?.close())
  beforeEach(async () => {
    await llm.fresh()
    // zai's sentinel protocol: a justified ■TRUE■ for check, one ■json_start■ object for extract
    standIn.answer = (r) => JSON.stringify(r.body.messages).includes('json_start')
      ? { text: '■json_start■\n{ "name": "John Doe", "age": 30 }\n■json_end■' }
      : { text: 'Analysis: a blue sky on a clear day describes the weather.\nFinal Answer: ■TRUE■\n■END■' }
  })

  for (const path of ['legacy', 'v2'] as const) {
    it(`zai.check and zai.extract over cognitive's ${path} path`, async () => {
      const answer = await runZai([h.baseUrl, h.credentials.botId, key, path])
      expect(answer.error).toBeUndefined()
      expect(answer).toEqual({ check: true, extract: { name: 'John Doe', age: 30 } })
      // both went to the provider, with zai's stop sequences; each call recorded by the path it came through
      expect(standIn.requests.map((r) => r.body.stop)).toEqual([['■END■'], ['■json_end■']])
      if (path === 'legacy') {
        // its model preferences, saved through the Files API under the key it computes (with the Client's undefined botId)
        const file = await h.app.inject({ method: 'GET', url: `/v1/files/${encodeURIComponent('bot->undefined->models.config.json')}`, headers: { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId } })
        expect(file.statusCode, file.body).toBe(200)
        expect((file.json() as { file: { tags: Record<string, string> } }).file.tags).toMatchObject({ system: 'true', purpose: 'config' })
      }
      const calls = (await recordedCalls(h)).slice(-2)
      expect(calls.map((c) => [c.via, c.provider, c.model, c.promptCategory])).toEqual([
        [path === 'v2' ? 'cognitive-v2' : 'llm-interface', 'local', 'small', 'zai:zai.check'],
        [path === 'v2' ? 'cognitive-v2' : 'llm-interface', 'local', 'small', 'zai:zai.extract'],
      ])
    }, 90_000)
  }
})
