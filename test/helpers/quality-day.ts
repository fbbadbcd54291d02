/**
 * A scripted day of traffic for the dashboard's series (getBotAnalytics and getBotQualityAnalytics), shared by the
 * API suite (test/e2e/admin-quality-analytics.test.ts) and the console's browser test: a deployed bot with a
 * knowledge base, users talking to it through the official `@botpress/chat` client (echoed messages, a turn that
 * throws, a turn stopped at its time budget, knowledge questions with and without a good passage), thumbs up and
 * down on its replies (changed and removed too), and two handoffs (one claimed after a wait, one left waiting).
 * Every expected number is counted here from what the script did and saw, never read back from the server.
 */
import { Client } from '@botpress/client'
import type { Config } from '../../src/config.js'
import type { Harness } from './harness.js'
import { createBot, sleep, STREAM_CONFIG, Talk, textOf, type TestBot } from '../runtime/helpers.js'

/** startParley's config for the day: a short time budget so that the spinning turn stops quickly. */
export const QUALITY_DAY_CONFIG: Partial<Config> = {
  ...STREAM_CONFIG,
  sandboxLimits: { budgetMs: 500, timeoutMs: 3000, memoryBytes: 64 * 1024 * 1024 },
}

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'text') return
    const t = event.payload.text
    if (t === 'throw') throw new Error('a failing turn')
    if (t === 'spin') for (;;) {}
    if (t.startsWith('ask ')) {
      const r = await client.searchKnowledge({ query: t.slice(4) })
      await client.createMessage({ payload: { type: 'text', text: r.noAnswer ? 'NO ANSWER' : 'ANSWER ' + r.results[0].fileKey } })
      return
    }
    await client.createMessage({ payload: { type: 'text', text: 'echo ' + t } })
  },
}
`

export interface QualityDayCounts {
  users: number
  userMessages: number
  botMessages: number
  failedTurns: number
  timedOutTurns: number
  knowledgeSearches: number
  knowledgeNoAnswer: number
  positiveFeedback: number
  negativeFeedback: number
  handoffsRequested: number
  handoffsClaimed: number
  /** Waits of the claimed handoffs (claimedAt − requestedAt of the Admin API's answers), in seconds. */
  handoffWaitsSeconds: number[]
}

type Admin = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<any>

/** The Admin API over HTTP as the bootstrap owner (throws on an error status). */
export function adminHttp(h: Pick<Harness, 'baseUrl' | 'credentials'>): Admin {
  return async (method, path, body) => {
    const res = await fetch(`${h.baseUrl}/v1/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : undefined
  }
}

/** Runs the day on a Parley started with QUALITY_DAY_CONFIG and `listen: true`; returns the bot and the counts. */
export async function scriptedQualityDay(h: Harness): Promise<{ bot: TestBot; counts: QualityDayCounts }> {
  const bot = await createBot(h, CODE)
  const files = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: bot.id })
  const { knowledgeBase } = await files.createKnowledgeBase({ name: 'Support' })
  await files.uploadFile({
    key: 'opening-hours.md', index: true, tags: { kbId: knowledgeBase.id },
    content: '# Opening hours\n\nThe repair shop is open from 8:00 to 18:00 Monday to Friday and closed on public holidays.',
  })
  await h.app.services.files.knowledge.idle()

  const counts: QualityDayCounts = {
    users: 0, userMessages: 0, botMessages: 0, failedTurns: 0, timedOutTurns: 0, knowledgeSearches: 0, knowledgeNoAnswer: 0,
    positiveFeedback: 0, negativeFeedback: 0, handoffsRequested: 0, handoffsClaimed: 0, handoffWaitsSeconds: [],
  }
  const feedback = new Map<string, 'positive' | 'negative'>()
  const talks: Talk[] = []
  const open = async () => {
    const talk = await Talk.open(bot)
    talks.push(talk)
    counts.users++
    return talk
  }
  /** Sends one text; with `replies`, waits for that many bot messages and returns them. */
  const say = async (talk: Talk, text: string, replies: number) => {
    counts.userMessages++
    if (replies === 0) {
      await talk.say(text)
      return []
    }
    const got = await talk.ask(text, replies)
    counts.botMessages += got.length
    return got
  }
  const rate = async (talk: Talk, messageId: string, value: 'positive' | 'negative' | null) => {
    const res = await fetch(`${bot.url}/messages/${encodeURIComponent(messageId)}/feedback`, {
      method: 'PUT', headers: { 'x-user-key': talk.user.user.key, 'content-type': 'application/json' }, body: JSON.stringify({ value }),
    })
    if (!res.ok) throw new Error(`feedback: ${res.status} ${await res.text()}`)
    if (value === null) feedback.delete(messageId)
    else feedback.set(messageId, value)
  }

  try {
    // A user with questions: one the knowledge base answers, one it cannot, each rated.
    const a = await open()
    const [hello] = await say(a, 'hello', 1)
    for (const question of ['ask When is the repair shop open?', 'ask What is the airspeed velocity of an unladen swallow?']) {
      const [answer] = await say(a, question, 1)
      counts.knowledgeSearches++
      if (textOf(answer!) === 'NO ANSWER') counts.knowledgeNoAnswer++
      await rate(a, answer!.id, textOf(answer!) === 'NO ANSWER' ? 'negative' : 'positive')
    }
    await rate(a, hello!.id, 'positive')
    await rate(a, hello!.id, 'negative') // changed: the last one counts
    // A user whose turns fail: one throws, one spins until its budget stops it; the next message is answered
    // (turns run in order, so by then both failures are recorded).
    const b = await open()
    await say(b, 'throw', 0)
    counts.failedTurns++
    await say(b, 'spin', 0)
    counts.timedOutTurns++
    const [after] = await say(b, 'still there?', 1)
    await rate(b, after!.id, 'positive')
    await rate(b, after!.id, null) // removed
    const [again] = await say(b, 'ask Is it open on public holidays?', 1)
    counts.knowledgeSearches++
    if (textOf(again!) === 'NO ANSWER') counts.knowledgeNoAnswer++
    await rate(b, again!.id, 'positive')
    // Two conversations handed to a person: one claimed after a wait, one left waiting.
    const admin = adminHttp(h)
    const c = await open()
    await say(c, 'I want a human', 1)
    const started = (await admin('POST', `/bots/${bot.id}/handoffs`, { conversationId: c.conversationId, reason: 'asked for a person' })).handoff
    counts.handoffsRequested++
    await sleep(400)
    // The claim writes a line in the user's chat ("… joined"), a message of the bot's side. It may reach the stream
    // before the claim's response does, so count what was seen before the claim.
    const seen = c.botMessages().length
    const claimed = (await admin('POST', `/bots/${bot.id}/handoffs/${c.conversationId}/claim`, {})).handoff
    counts.handoffsClaimed++
    counts.handoffWaitsSeconds.push((Date.parse(claimed.claimedAt) - Date.parse(started.requestedAt)) / 1000)
    await c.botCount(seen + 1)
    counts.botMessages += c.botMessages().length - seen
    const d = await open()
    await say(d, 'anyone?', 1)
    await admin('POST', `/bots/${bot.id}/handoffs`, { conversationId: d.conversationId })
    counts.handoffsRequested++
  } finally {
    for (const t of talks) await t.close()
  }
  for (const v of feedback.values()) counts[v === 'positive' ? 'positiveFeedback' : 'negativeFeedback']++
  return { bot, counts }
}

/** The records of a range summed field by field (the day may cross midnight UTC while it runs). */
export function sumRecords<T extends object>(records: T[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of records) for (const [k, v] of Object.entries(r)) if (typeof v === 'number') out[k] = (out[k] ?? 0) + v
  return out
}
