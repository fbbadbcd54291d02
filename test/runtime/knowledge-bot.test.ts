/**
 * Bots using knowledge bases, end to end: documents uploaded with `index: true` through the official
 * @botpress/client, a deployed bot whose workflow has a knowledge card, and a user asking through the
 * official @botpress/chat client. Checks the answer (best passage + sources), `event.kb` as seen by the
 * hooks running after the query (`included`, `results`), client.searchKnowledge from a hook, and errors
 * (unknown knowledge base) recorded in the bot's logs without breaking the turn.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { createBot, jsonAfter, Talk, uid, waitForLog, STREAM_CONFIG, type TestBot } from './helpers.js'

const CODE = String.raw`
export const workflows = {
  faq: {
    trigger: { type: 'message', pattern: '\\?$' },
    nodes: { answer: { cards: [
      { type: 'knowledge', knowledgeBases: ['Support'], output: 'found', noAnswer: 'NO ANSWER' },
      { type: 'say', text: 'VARS {{ JSON.stringify({ n: vars.found.results.length, included: vars.found.included.map((k) => k.name) }) }}' },
    ] } },
  },
  missing: {
    trigger: { type: 'message', text: 'broken kb' },
    nodes: { answer: { cards: [{ type: 'knowledge', knowledgeBases: ['Nope'] }, { type: 'say', text: 'after the failed card' }] } },
  },
}

export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.trigger) {
      if (event.kb) await client.createMessage({ payload: { type: 'text', text: 'HOOK ' + JSON.stringify({
        included: event.kb.included.map((k) => k.name),
        files: event.kb.results.map((r) => r.fileKey),
        scores: event.kb.results.every((r, i, all) => typeof r.score === 'number' && (i === 0 || all[i - 1].score >= r.score)),
      }) } })
      return
    }
    if (event.preview.startsWith('search ')) {
      const before = event.kb === undefined
      const r = await client.searchKnowledge({ query: event.preview.slice(7), limit: 2 })
      await client.createMessage({ payload: { type: 'text', text: 'SEARCH ' + JSON.stringify({ before, top: r.results[0] && r.results[0].fileKey, n: r.results.length, kbResults: event.kb.results.length }) } })
    }
  },
  async afterTurnEnd({ event, client }) {
    if (event.kb && event.preview.startsWith('search ')) await client.createMessage({ payload: { type: 'text', text: 'END ' + event.kb.results.length } })
  },
}
`

describe('runtime: knowledge bases in bot code', () => {
  let h: Harness
  let bot: TestBot

  beforeAll(async () => {
    h = await startParley({ listen: true, config: STREAM_CONFIG })
    bot = await createBot(h, CODE)
    const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
    const { knowledgeBase } = await files.createKnowledgeBase({ name: 'Support' })
    const docs: [string, string, Record<string, string>][] = [
      ['opening-hours.md', '# Opening hours\n\nThe repair shop is open from 8:00 to 18:00 Monday to Friday and closed on public holidays.', { kbId: knowledgeBase.id }],
      ['warranty.md', '# Warranty\n\nEvery repair carries a 12-month warranty on parts and labour.', { kbId: knowledgeBase.id }],
      ['internal.md', '# Internal\n\nThe repair shop staff party is on Friday.', {}],
    ]
    const ids: string[] = []
    for (const [key, content, tags] of docs) ids.push((await files.uploadFile({ key, content, index: true, tags })).file.id)
    await h.app.services.files.knowledge.idle()
    for (const id of ids) expect((await files.getFile({ id })).file.status).toBe('indexing_completed')
  })
  afterAll(async () => h?.close())

  it('a knowledge card answers with the best passage and its sources; hooks after it see event.kb', async () => {
    const talk = await Talk.open(bot, { userId: uid('kb') })
    try {
      const [answer, vars, hook] = await talk.askText('When is the repair shop open?', 3)
      expect(answer).toContain('8:00 to 18:00')
      expect(answer).toMatch(/Sources: opening-hours\.md/)
      expect(answer).not.toContain('internal.md') // not in the Support knowledge base
      expect(jsonAfter(vars!, 'VARS ')).toMatchObject({ included: ['Support'] })
      const seen = jsonAfter<{ included: string[]; files: string[]; scores: boolean }>(hook!, 'HOOK ')
      expect(seen.included).toEqual(['Support'])
      expect(seen.files[0]).toBe('opening-hours.md')
      expect(seen.files).not.toContain('internal.md')
      expect(seen.scores).toBe(true)

      const [none] = await talk.askText('Do you sell bicycles?', 1)
      expect(none).toBe('NO ANSWER')
    } finally {
      await talk.close()
    }
  })

  it('client.searchKnowledge from a hook fills event.kb for the hooks that run after it', async () => {
    const talk = await Talk.open(bot, { userId: uid('kb-search') })
    try {
      const [search, end] = await talk.askText('search staff party', 2)
      // No knowledge base named: every knowledge base of the bot (internal.md is in none of them).
      expect(jsonAfter(search!, 'SEARCH ')).toEqual({ before: true, n: 0, kbResults: 0 })
      expect(end).toBe('END 0')
      const [warranty] = await talk.askText('search guarantee on labour', 2)
      expect(jsonAfter(warranty!, 'SEARCH ')).toEqual({ before: true, top: 'warranty.md', n: 1, kbResults: 1 })
    } finally {
      await talk.close()
    }
  })

  it('an unknown knowledge base is a recorded card error; the flow goes on', async () => {
    const talk = await Talk.open(bot, { userId: uid('kb-bad') })
    try {
      expect(await talk.askText('broken kb', 1)).toEqual(['after the failed card'])
      const log = await waitForLog(h, bot.id, (l) => l.message.includes('Knowledge base'))
      expect(log.message).toMatch(/cards\[0\] \(knowledge\).*Nope/)
    } finally {
      await talk.close()
    }
  })
})
