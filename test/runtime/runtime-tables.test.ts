/**
 * The sandboxed bot's client has the table operations (src/runtime/sandbox-tables.ts): a bot stores
 * and queries rows from its code, through the same TablesService as the Tables API, which sees them.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { runtimeClient } from '../helpers/runtime-client.js'
import { createBot, jsonAfter, Talk, type TestBot } from './helpers.js'

const CODE = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    const text = event.payload.text
    if (typeof text !== 'string' || !text.startsWith('order ')) return
    const [, item, qty] = text.split(' ')
    await client.getOrCreateTable({ table: 'OrdersTable', keyColumn: 'orderId', schema: {
      type: 'object',
      properties: { orderId: { type: 'string' }, userId: { type: 'string' }, item: { type: 'string', 'x-zui': { searchable: true } }, qty: { type: 'number' } },
      required: ['orderId'],
    } })
    await client.upsertTableRows({ table: 'OrdersTable', rows: [{ orderId: event.messageId, userId: event.userId, item, qty: Number(qty) }] })
    const mine = await client.findTableRows({ table: 'OrdersTable', filter: { userId: event.userId }, orderBy: 'qty', orderDirection: 'desc' })
    const totals = await client.findTableRows({ table: 'OrdersTable', filter: { userId: event.userId }, group: { item: 'key', qty: 'sum' } })
    const bad = await client.createTableRows({ table: 'OrdersTable', rows: [{ orderId: 'x', qty: 'many' }] })
    let refused = ''
    try { await client.findTableRows({ table: 'OrdersTable', filter: { qty: { $where: '1' } } }) } catch (err) { refused = String(err.message || err) }
    await client.createMessage({ payload: { type: 'text', text: 'RESULT ' + JSON.stringify({
      items: mine.rows.map((r) => r.item + ':' + r.qty), totals: totals.rows, errors: bad.errors, refused,
    }) } })
  },
}
`

describe('runtime: the sandboxed client\'s table operations', () => {
  let h: Harness
  let bot: TestBot
  let api: Client

  beforeAll(async () => {
    h = await startParley({ listen: true })
    bot = await createBot(h, CODE)
    api = await runtimeClient(h, bot.id)
  })
  afterAll(async () => h?.close())

  it('stores and queries rows from bot code; the Tables API sees them', async () => {
    const talk = await Talk.open(bot)
    try {
      await talk.askText('order apple 2', 1, 20_000)
      const replies = await talk.askText('order pear 5', 1, 20_000)
      const r = jsonAfter(replies[0]!, 'RESULT ')
      expect(r.items).toEqual(['pear:5', 'apple:2'])
      expect(r.totals).toEqual([{ itemKey: 'apple', qtySum: 2 }, { itemKey: 'pear', qtySum: 5 }])
      expect(r.errors).toEqual([expect.stringMatching(/column "qty" must be of type number/)])
      expect(r.refused).toMatch(/unknown operator "\$where"/)
    } finally {
      await talk.close()
    }
    const { table, rows } = await api.getTable({ table: 'OrdersTable' })
    expect(table.keyColumn).toBe('orderId')
    expect(rows).toBe(2)
  })
})
