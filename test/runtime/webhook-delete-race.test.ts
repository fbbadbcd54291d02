/**
 * Issue #13 item 7: webhook POSTs racing the deletion of their bot, or of the bot's workspace. Every
 * answer is 200 (the delivery was queued before the delete, and went with the bot) or 404 in the
 * Botpress error body (the integration was gone by the time the delivery would have been queued),
 * never a 5xx; and nothing is left behind: no delivery row, no body blob. Workers are off, so only the
 * deletion can have removed what the accepted deliveries stored. Runs on both engines.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient, storedBlobCount, STREAM_CONFIG, uid } from './helpers.js'

const ROUNDS = 8
const BOTS_PER_ROUND = 3
const CLIENTS_PER_BOT = 8
const MAX_POSTS_PER_CLIENT = 40

interface Answer { status: number; body: any }

async function post(url: string, n: number): Promise<Answer> {
  // Some deliveries carry an idempotency key (the conflict path of the queue insert races the delete too).
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(n % 3 === 0 && { 'idempotency-key': `k-${n % 9}` }) }
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ n, pad: 'x'.repeat(2000) }) })
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, body }
}

/** Every answer of every round: none but 200 (with the delivery) or 404 (with the Botpress error body). */
function expectRaceAnswers(answers: Answer[]): void {
  const count = (status: number) => answers.filter((a) => a.status === status).length
  const wrong = answers.filter((a) => a.status !== 200 && a.status !== 404)
  expect(wrong, `${wrong.length} of ${answers.length} answers neither 200 nor 404 (${count(200)} × 200, ${count(404)} × 404)`).toEqual([])
  for (const a of answers) {
    if (a.status === 200) expect(a.body).toEqual({ id: expect.any(String), duplicate: expect.any(Boolean) })
    else expect(a.body).toEqual({ id: expect.any(String), code: 404, type: 'ResourceNotFound', message: expect.any(String) })
  }
}

describe('webhook POSTs racing bot and workspace deletes', () => {
  let h: Harness

  beforeAll(async () => {
    h = await startParley({ listen: true, config: { ...STREAM_CONFIG, webhook: { maxBodyBytes: 100 * 1024 * 1024, inlineBodyBytes: 1024, toleranceSeconds: 300, workers: 0, pollMs: 200 } } })
  })
  afterAll(async () => {
    await h?.close()
  })

  /** Body blobs left (the harness's blob store is the local disk on both engines). */
  const blobCount = () => storedBlobCount({ dataDir: h.dataDir, databaseUrl: h.databaseUrl }, 'local')
  const deliveryRows = async () => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries`.execute(h.store.db)).rows[0]!.n)

  /** Bots with the webhook integration in `workspaceId`, and their webhook URLs. */
  async function webhookBots(workspaceId: string): Promise<{ id: string; url: string }[]> {
    return Promise.all(Array.from({ length: BOTS_PER_ROUND }, async () => {
      const { bot, integrations } = await h.app.services.bots.createBot(workspaceId, { name: uid('race'), integrations: { webhook: { enabled: true } } })
      return { id: bot.id, url: `${h.baseUrl}/webhooks/${integrations[0]!.webhookId}` }
    }))
  }

  /**
   * Keeps CLIENTS_PER_BOT POSTs in flight per bot, deletes once each bot has had a few answered (so
   * that others are in flight, at every stage of a receive), and goes on until every client has been
   * answered 404 (or has sent MAX_POSTS_PER_CLIENT). Returns every answer.
   */
  async function race(urls: string[], remove: () => Promise<void>): Promise<Answer[]> {
    const answers: Answer[] = []
    let deleted: Promise<void> | undefined
    const client = async (url: string, c: number) => {
      for (let n = 0; n < MAX_POSTS_PER_CLIENT; n++) {
        const a = await post(url, c * MAX_POSTS_PER_CLIENT + n)
        answers.push(a)
        if (answers.length === urls.length * CLIENTS_PER_BOT * 2) deleted ??= remove()
        if (a.status !== 200) break
      }
    }
    await Promise.all(urls.flatMap((url) => Array.from({ length: CLIENTS_PER_BOT }, (_, c) => client(url, c))))
    deleted ??= remove()
    await deleted
    return answers
  }

  it('answers 200 or 404 (never 5xx) to POSTs racing bot deletes, and leaves no delivery or body behind', async () => {
    const admin = adminClient(h)
    const answers: Answer[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const bots = await webhookBots(h.credentials.workspaceId)
      answers.push(...await race(bots.map((b) => b.url), async () => {
        await Promise.all(bots.map((b) => admin.deleteBot({ id: b.id })))
      }))
    }
    expectRaceAnswers(answers)
    expect(await deliveryRows()).toBe(0)
    expect(await blobCount()).toBe(0)
  }, 120_000)

  it('answers 200 or 404 (never 5xx) to POSTs racing workspace deletes, and leaves no delivery or body behind', async () => {
    const admin = adminClient(h)
    const answers: Answer[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const workspace = await admin.createWorkspace({ name: uid('race-ws') })
      const bots = await webhookBots(workspace.id)
      answers.push(...await race(bots.map((b) => b.url), async () => {
        await admin.deleteWorkspace({ id: workspace.id })
      }))
    }
    expectRaceAnswers(answers)
    expect(await deliveryRows()).toBe(0)
    expect(await blobCount()).toBe(0)
  }, 120_000)
})
