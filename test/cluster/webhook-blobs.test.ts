/**
 * Issue #13 item 8: a webhook delivery received by one instance and processed by another. Two
 * `parley serve` processes on one PostgreSQL database, each with its own data directory (nothing
 * shared on disk): A only receives (PARLEY_WEBHOOK_WORKERS=0), B processes. The body is above the
 * inline threshold, so it is a blob in the configured blob store (PostgreSQL by default here) that B's
 * bot reads in chunks with client.readWebhookBody; B then deletes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt } from '../cli/helpers.js'
import { dropDatabase, freshDatabase } from '../helpers/pg.js'
import { adminClient, createBot, waitForLog } from '../runtime/helpers.js'
import { eventually, freePort, Processes, query, readCredentials, type Instance } from './helpers.js'

/** Reads the whole body in chunks and logs its size, its last characters and how many reads it took. */
const BOT_CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type !== 'webhook') return
    let text = '', part, reads = 0
    do { part = await client.readWebhookBody(); text += part.text; reads++ } while (!part.done)
    console.log('WEBHOOK ' + JSON.stringify({ id: event.id, size: event.payload.size, included: event.payload.bodyIncluded, length: text.length, tail: text.slice(-24), reads }))
  },
}
`

const INLINE_BYTES = 1024

describe('webhook bodies between instances (PostgreSQL, separate data directories)', () => {
  const procs = new Processes()
  let databaseUrl: string
  let a: Instance
  let b: Instance
  let dataDirA: string

  beforeAll(async () => {
    await ensureBuilt()
    databaseUrl = await freshDatabase()
    const [portA, portB] = [await freePort(), await freePort()]
    const env = { PARLEY_WEBHOOK_INLINE_BYTES: String(INLINE_BYTES), PARLEY_WEBHOOK_POLL_MS: '200' }
    // A first: it bootstraps the database and writes credentials.json to its own data directory.
    dataDirA = procs.tempDir('parley-wh-a-')
    a = await procs.start('A', { port: portA, databaseUrl, dataDir: dataDirA, publicUrl: `http://127.0.0.1:${portA}`, env: { ...env, PARLEY_WEBHOOK_WORKERS: '0' } }).started
    b = await procs.start('B', { port: portB, databaseUrl, dataDir: procs.tempDir('parley-wh-b-'), publicUrl: `http://127.0.0.1:${portB}`, env: { ...env, PARLEY_WEBHOOK_WORKERS: '2' } }).started
  }, 240_000)

  afterAll(async () => {
    await procs.stopAll()
    if (databaseUrl) await dropDatabase(databaseUrl).catch(() => {})
  }, 60_000)

  it('a large body received by A (receive only) is read in full by the bot on B, then deleted', async () => {
    const parley = { baseUrl: a.url, credentials: readCredentials(dataDirA) }
    const botId = (await createBot(parley, BOT_CODE)).id
    const admin = adminClient(parley)
    await admin.updateBot({ id: botId, integrations: { webhook: { enabled: true } } } as never)
    const webhookUrl = (await admin.getBot({ id: botId })).bot.integrations.webhook!.webhookUrl
    expect(webhookUrl.startsWith(a.url)).toBe(true)

    // ~3 MB: far above the inline threshold, and several 1 MB reads.
    const body = JSON.stringify({ items: Array.from({ length: 30_000 }, (_, i) => ({ n: i, text: 'x'.repeat(80) })), end: 'THE-END' })
    const res = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    const { id } = (await res.json()) as { id: string }

    // The turn's outcome, from either instance's view of the shared logs: the body, or the failure.
    const log = await waitForLog(parley, botId, (l) => l.message.startsWith('WEBHOOK ') || l.level === 'error', 60_000)
    expect(log.message.startsWith('WEBHOOK '), log.message).toBe(true)
    expect(JSON.parse(log.message.slice(8))).toEqual({ id, size: body.length, included: false, length: body.length, tail: body.slice(-24), reads: Math.ceil(body.length / (1024 * 1024)) })

    // Done, and the body is gone from the shared blob store.
    await eventually(async () => {
      const [row] = await query<{ status: string; blob_name: string | null }>(databaseUrl, 'SELECT status, blob_name FROM webhook_deliveries WHERE id = $1', [id])
      return row?.status === 'done' && row.blob_name === null ? row : undefined
    }, 'the delivery marked done')
    await eventually(async () => {
      const [{ n }] = await query<{ n: string }>(databaseUrl, 'SELECT count(*) AS n FROM blobs') as [{ n: string }]
      return Number(n) === 0 ? true : undefined
    }, 'the body blob deleted')
    expect(b.alive()).toBe(true)
  })
})
