/**
 * Optional answer composition: with PARLEY_KB_ANSWER_URL set (config.kbAnswer), the knowledge card sends the
 * question and the passages to an OpenAI-compatible /chat/completions endpoint and answers with its text plus
 * the sources. Tested against a local stand-in server (never the network): the request it receives, and the
 * fallback to the best passage when the endpoint fails.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, Talk, uid, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const workflows = {
  faq: { trigger: { type: 'message' }, nodes: { a: { cards: [{ type: 'knowledge' }] } } },
}
`

describe('knowledge card: composed answers (OpenAI-compatible stand-in)', () => {
  let h: Harness
  let bot: TestBot
  let standIn: Server
  const requests: { headers: IncomingMessage['headers']; url: string; body: any }[] = []
  let failNext = false

  beforeAll(async () => {
    standIn = createServer((req, res) => {
      let raw = ''
      req.on('data', (c) => (raw += c))
      req.on('end', () => {
        requests.push({ headers: req.headers, url: req.url ?? '', body: JSON.parse(raw) })
        if (failNext) {
          res.writeHead(500).end('{"error":"boom"}')
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Composed: the museum opens at ten.' } }] }))
      })
    })
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, kbAnswer: { url, model: 'stand-in-model', apiKey: 'sk-test', timeoutMs: 5000 } } })
    bot = await createBot(h, CODE)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
    await files.uploadFile({ key: 'museum.md', content: '# Museum\n\nThe museum opens at 10:00 every day except Monday.', index: true })
    await h.app.services.files.knowledge.idle()
  })
  afterAll(async () => {
    await h?.close()
    await new Promise((resolve) => standIn?.close(resolve))
  })

  it('answers with the composed text and the sources; the endpoint got the question and the passages', async () => {
    const talk = await Talk.open(bot, { userId: uid('compose') })
    try {
      const [answer] = await talk.askText('When does the museum open?', 1)
      expect(answer).toBe('Composed: the museum opens at ten.\n\nSources: museum.md')
      const req = requests.at(-1)!
      expect(req.url).toBe('/v1/chat/completions')
      expect(req.headers.authorization).toBe('Bearer sk-test')
      expect(req.body.model).toBe('stand-in-model')
      const user = req.body.messages.find((m: { role: string }) => m.role === 'user').content as string
      expect(user).toContain('When does the museum open?')
      expect(user).toContain('The museum opens at 10:00')
    } finally {
      await talk.close()
    }
  })

  it('falls back to the best passage when the endpoint fails', async () => {
    failNext = true
    const talk = await Talk.open(bot, { userId: uid('compose-fail') })
    try {
      const [answer] = await talk.askText('museum opening hours?', 1)
      expect(answer).toBe('The museum opens at 10:00 every day except Monday.\n\nSources: museum.md')
    } finally {
      failNext = false
      await talk.close()
    }
  })
})
