/**
 * Admin API through app.inject: listBots — filters (dot-notation tags, dev, integrationNames),
 * sorting, keyset paging (no repeats, no skips while bots come and go), query validation, and
 * workspace isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { expectError, ISO_Z, parseJson, type Method, type Res } from '../helpers/admin-client.js'
import { setTimeout as sleep } from 'node:timers/promises'

interface Summary {
  id: string
  createdAt: string
  updatedAt: string
  name: string
  deployedAt?: string
  tags: Record<string, string>
  dev: boolean
}

type SortField = 'createdAt' | 'updatedAt'
type SortDirection = 'asc' | 'desc'


describe('Admin API: listBots', () => {
  let h: Harness
  let ws: string

  async function call(method: Method, path: string, body?: unknown, workspaceId = ws): Promise<Res> {
    const res = await h.app.inject({
      method,
      url: `/v1/admin${path}`,
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': workspaceId },
      ...(body !== undefined ? { payload: body as Record<string, unknown> } : method === 'DELETE' ? { payload: {} } : {}),
    })
    return { status: res.statusCode, body: parseJson(res.body), text: res.body }
  }

  const list = (query: string, workspaceId = ws) => call('GET', `/bots${query ? `?${query}` : ''}`, undefined, workspaceId)

  async function createBot(body: Record<string, unknown> = {}, workspaceId = ws): Promise<Summary> {
    const res = await call('POST', '/bots', body, workspaceId)
    expect(res.status, res.text).toBe(201)
    return res.body.bot
  }

  async function deleteBot(id: string, workspaceId = ws): Promise<void> {
    const res = await call('DELETE', `/bots/${id}`, undefined, workspaceId)
    expect(res.status, res.text).toBe(200)
  }

  async function newWorkspace(name: string): Promise<string> {
    const res = await call('POST', '/workspaces', { name })
    expect(res.status, res.text).toBe(201)
    return res.body.id
  }

  /** Walks every page; `between` runs after each page (to create and delete bots mid-walk). */
  async function walk(query: string, workspaceId: string, between?: (page: number) => Promise<void>): Promise<{ ids: string[]; bots: Summary[]; pages: number }> {
    const bots: Summary[] = []
    let next: string | undefined
    let pages = 0
    do {
      const res = await list(`${query}${next ? `&nextToken=${encodeURIComponent(next)}` : ''}`, workspaceId)
      expect(res.status, res.text).toBe(200)
      bots.push(...(res.body.bots as Summary[]))
      next = res.body.meta.nextToken
      pages++
      if (next && between) await between(pages)
      expect(pages).toBeLessThan(500)
    } while (next)
    return { ids: bots.map((b) => b.id), bots, pages }
  }

  /** The order listBots promises: by the sort field, then by id, in the given direction. */
  function expectSorted(bots: Summary[], field: SortField, direction: SortDirection): void {
    for (let i = 1; i < bots.length; i++) {
      const a = bots[i - 1]!
      const b = bots[i]!
      const cmp = Date.parse(a[field]) - Date.parse(b[field]) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      if (direction === 'asc') expect(cmp, `${a.id} before ${b.id}`).toBeLessThan(0)
      else expect(cmp, `${a.id} before ${b.id}`).toBeGreaterThan(0)
    }
  }

  beforeAll(async () => {
    h = await startParley()
    ws = h.credentials.workspaceId
  })
  afterAll(async () => h?.close())

  it('lists bot summaries { bots, meta } newest first; no nextToken on the last page', async () => {
    const wsA = await newWorkspace('summaries')
    const a = await createBot({ name: 'first', tags: { k: 'v' } }, wsA)
    await sleep(3)
    const b = await createBot({ name: 'second', dev: true }, wsA)
    const res = await list('', wsA)
    expect(res.status, res.text).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['bots', 'meta'])
    expect(res.body.meta).toEqual({})
    expect(res.body.bots.map((x: Summary) => x.id)).toEqual([b.id, a.id])
    const [second, first] = res.body.bots as Summary[]
    expect(first).toEqual({ id: a.id, name: 'first', createdAt: a.createdAt, updatedAt: a.updatedAt, tags: { k: 'v' }, dev: false })
    expect(second).toEqual({ id: b.id, name: 'second', createdAt: b.createdAt, updatedAt: b.updatedAt, tags: {}, dev: true })
    expect(first!.createdAt).toMatch(ISO_Z)
    expect(first!.updatedAt).toMatch(ISO_Z)
    // Summaries carry no secrets.
    expect(res.text).not.toContain('signingSecret')
    expect(res.text).not.toContain('encryptionKey')
    expect(res.text).not.toContain('integrations')
  })

  it('default pageSize is 20; pageSize 1..100 is honoured', async () => {
    const wsP = await newWorkspace('page sizes')
    for (let i = 0; i < 23; i++) await createBot({ name: `p${i}` }, wsP)
    const first = await list('', wsP)
    expect(first.body.bots).toHaveLength(20)
    expect(first.body.meta.nextToken).toEqual(expect.any(String))
    const second = await list(`nextToken=${encodeURIComponent(first.body.meta.nextToken)}`, wsP)
    expect(second.body.bots).toHaveLength(3)
    expect(second.body.meta).toEqual({})
    expect((await list('pageSize=1', wsP)).body.bots).toHaveLength(1)
    expect((await list('pageSize=100', wsP)).body.bots).toHaveLength(23)
    expect((await list('pageSize=23', wsP)).body.meta).toEqual({})
  })

  it('invalid nextToken is 400 InvalidQuery', async () => {
    const tokens = [
      'garbage!!',
      'not-a-token',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('["x"]').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["a","b"]').toString('base64url'),
      Buffer.from('[1.5,"b"]').toString('base64url'),
      'A'.repeat(600),
    ]
    for (const token of tokens) expectError(await list(`nextToken=${encodeURIComponent(token)}`), 400, 'InvalidQuery')
  })

  it('pageSize 0, 101, negative or non-numeric is 400 InvalidQuery; so are bad sortField, sortDirection and dev', async () => {
    for (const q of ['pageSize=0', 'pageSize=101', 'pageSize=-1', 'pageSize=abc', 'pageSize=1.5', 'sortField=name', 'sortDirection=up', 'dev=maybe']) {
      expectError(await list(q), 400, 'InvalidQuery')
    }
  })

  it('malformed filters: tags without a key is 400; prototype keys in the query are ignored, never an error or a leak', async () => {
    expectError(await list('tags=prod'), 400, 'InvalidQuery')
    expectError(await list(Array.from({ length: 21 }, (_, i) => `integrationNames=n${i}`).join('&')), 400, 'InvalidQuery')
    const all = ((await list('pageSize=100')).body.bots as Summary[]).map((b) => b.id)
    for (const q of ['tags.__proto__=x', 'tags.constructor=x', '__proto__.polluted=yes', 'constructor.prototype=x', 'tags.prototype=x']) {
      const res = await list(`pageSize=100&${q}`)
      expect(res.status, `${q}: ${res.text}`).toBeLessThan(500)
      if (res.status === 200) expect((res.body.bots as Summary[]).map((b) => b.id)).toEqual(all)
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('tags filter in dot notation (tags.env=prod); several tags must all match', async () => {
    const wsT = await newWorkspace('tags')
    const prod = await createBot({ tags: { env: 'prod', team: 'a' } }, wsT)
    const prodB = await createBot({ tags: { env: 'prod', team: 'b' } }, wsT)
    const staging = await createBot({ tags: { env: 'staging', team: 'a' } }, wsT)
    await createBot({}, wsT)
    const ids = async (q: string) => ((await list(q, wsT)).body.bots as Summary[]).map((b) => b.id).sort()
    expect(await ids('tags.env=prod')).toEqual([prod.id, prodB.id].sort())
    expect(await ids('tags.env=prod&tags.team=a')).toEqual([prod.id])
    expect(await ids('tags.team=a')).toEqual([prod.id, staging.id].sort())
    expect(await ids('tags.env=dev')).toEqual([])
    expect(await ids('tags.nope=prod')).toEqual([])
    // Values are URL-decoded; spaces and dots in values work.
    const spaced = await createBot({ tags: { label: 'a b.c' } }, wsT)
    expect(await ids(`tags.label=${encodeURIComponent('a b.c')}`)).toEqual([spaced.id])
    // The tags filter combines with paging.
    const paged = await walk('tags.env=prod&pageSize=1', wsT)
    expect(paged.ids.sort()).toEqual([prod.id, prodB.id].sort())
    expect(paged.pages).toBe(2)
  })

  it('dev filter: dev=true only dev bots, dev=false only the others', async () => {
    const wsD = await newWorkspace('dev')
    const dev = await createBot({ dev: true }, wsD)
    const prod = await createBot({ dev: false }, wsD)
    const plain = await createBot({}, wsD)
    const ids = async (q: string) => ((await list(q, wsD)).body.bots as Summary[]).map((b) => b.id).sort()
    expect(await ids('dev=true')).toEqual([dev.id])
    expect(await ids('dev=false')).toEqual([prod.id, plain.id].sort())
    expect(await ids('')).toEqual([dev.id, prod.id, plain.id].sort())
    expect(await ids('dev=true&tags.x=y')).toEqual([])
  })

  it('integrationNames filter keeps bots with that integration enabled', async () => {
    const wsI = await newWorkspace('integrations')
    const withChat = await createBot({}, wsI)
    const without = await createBot({ integrations: {} }, wsI)
    const ids = async (q: string) => ((await list(q, wsI)).body.bots as Summary[]).map((b) => b.id).sort()
    expect(await ids('integrationNames=chat')).toEqual([withChat.id])
    expect(await ids('integrationNames=telegram')).toEqual([])
    expect(await ids('')).toEqual([withChat.id, without.id].sort())
  })

  it('sortField and sortDirection order the list (updatedAt differs from createdAt after updates)', async () => {
    const wsS = await newWorkspace('sorting')
    const bots: Summary[] = []
    for (let i = 0; i < 6; i++) {
      bots.push(await createBot({ name: `s${i}` }, wsS))
      await sleep(2)
    }
    // Touch the oldest ones, so that updatedAt order is different from createdAt order.
    for (const b of [bots[1]!, bots[0]!]) {
      expect((await call('PUT', `/bots/${b.id}`, { name: `${b.name}-touched` }, wsS)).status).toBe(200)
      await sleep(2)
    }
    const ids = async (q: string) => ((await list(q, wsS)).body.bots as Summary[]).map((b) => b.id)
    const created = bots.map((b) => b.id)
    expect(await ids('')).toEqual([...created].reverse())
    expect(await ids('sortField=createdAt&sortDirection=desc')).toEqual([...created].reverse())
    expect(await ids('sortField=createdAt&sortDirection=asc')).toEqual(created)
    expect(await ids('sortDirection=asc')).toEqual(created)
    const byUpdateAsc = [bots[2]!, bots[3]!, bots[4]!, bots[5]!, bots[1]!, bots[0]!].map((b) => b.id)
    expect(await ids('sortField=updatedAt&sortDirection=asc')).toEqual(byUpdateAsc)
    expect(await ids('sortField=updatedAt')).toEqual([...byUpdateAsc].reverse())
    for (const field of ['createdAt', 'updatedAt'] as const) {
      for (const direction of ['asc', 'desc'] as const) {
        const paged = await walk(`sortField=${field}&sortDirection=${direction}&pageSize=4`, wsS)
        expect(paged.ids).toEqual(await ids(`sortField=${field}&sortDirection=${direction}`))
        expectSorted(paged.bots, field, direction)
      }
    }
  })

  describe.each([
    ['createdAt', 'asc'],
    ['createdAt', 'desc'],
    ['updatedAt', 'asc'],
    ['updatedAt', 'desc'],
  ] as const)('paging invariant, sortField=%s sortDirection=%s', (field, direction) => {
    it('while bots are created and deleted between pages, the walk neither repeats nor skips any bot that existed throughout', async () => {
      const wsW = await newWorkspace(`walk ${field} ${direction}`)
      const stable: Summary[] = []
      const doomed: Summary[] = []
      // Bursts of bots in the same millisecond (ties broken by id) and bots a few ms apart.
      for (let i = 0; i < 40; i++) {
        const bot = await createBot({ name: `w${i}` }, wsW)
        ;(i % 4 === 1 ? doomed : stable).push(bot)
        if (i % 7 === 0) await sleep(2)
      }
      // For updatedAt, shuffle the update order a little before the walk (never during it).
      if (field === 'updatedAt') {
        for (const b of [...stable.slice(0, 6)].reverse()) {
          expect((await call('PUT', `/bots/${b.id}`, { description: 'touched' }, wsW)).status).toBe(200)
          await sleep(1)
        }
      }
      const created: string[] = []
      const deleted = new Set<string>()
      const result = await walk(`sortField=${field}&sortDirection=${direction}&pageSize=6`, wsW, async (page) => {
        // Two new bots per page, one deleted from the doomed set, and one of the new bots deleted again.
        for (let i = 0; i < 2; i++) created.push((await createBot({ name: `new-${page}-${i}` }, wsW)).id)
        const victim = doomed.shift()
        if (victim) {
          await deleteBot(victim.id, wsW)
          deleted.add(victim.id)
        }
        if (page % 2 === 0) {
          const gone = created[created.length - 1]!
          await deleteBot(gone, wsW)
          deleted.add(gone)
        }
      })
      expect(result.pages).toBeGreaterThan(5)
      // No repeats at all.
      expect(new Set(result.ids).size).toBe(result.ids.length)
      // Every bot that existed throughout appears exactly once.
      const seen = new Set(result.ids)
      const skipped = stable.filter((b) => !seen.has(b.id)).map((b) => b.name)
      expect(skipped).toEqual([])
      // Nothing that never existed in this workspace shows up.
      const known = new Set([...stable, ...doomed].map((b) => b.id).concat(created, [...deleted]))
      for (const id of result.ids) expect(known.has(id)).toBe(true)
      // Stable bots come out in the promised order.
      const stableIds = new Set(stable.map((b) => b.id))
      expectSorted(result.bots.filter((b) => stableIds.has(b.id)), field, direction)
      // Pages themselves are sorted end to end (new bots sort at the newest end).
      expectSorted(result.bots, field, direction)
    })
  })

  it('a nextToken from one sort order can be reused: it never errors and never repeats', async () => {
    const wsR = await newWorkspace('reuse')
    for (let i = 0; i < 5; i++) await createBot({}, wsR)
    const first = await list('pageSize=2&sortField=updatedAt&sortDirection=asc', wsR)
    const token = encodeURIComponent(first.body.meta.nextToken)
    const again1 = await list(`pageSize=2&sortField=updatedAt&sortDirection=asc&nextToken=${token}`, wsR)
    const again2 = await list(`pageSize=2&sortField=updatedAt&sortDirection=asc&nextToken=${token}`, wsR)
    expect(again1.body).toEqual(again2.body)
    const firstIds = new Set(first.body.bots.map((b: Summary) => b.id))
    for (const b of again1.body.bots as Summary[]) expect(firstIds.has(b.id)).toBe(false)
  })

  it('never lists another workspace\'s bots', async () => {
    const wsX = await newWorkspace('isolated X')
    const wsY = await newWorkspace('isolated Y')
    const x = await createBot({ tags: { iso: 'yes' } }, wsX)
    const y = await createBot({ tags: { iso: 'yes' } }, wsY)
    expect((await walk('pageSize=100', wsX)).ids).toEqual([x.id])
    expect((await walk('pageSize=100', wsY)).ids).toEqual([y.id])
    expect(((await list('tags.iso=yes', wsX)).body.bots as Summary[]).map((b) => b.id)).toEqual([x.id])
    const all = await walk('pageSize=100', ws)
    expect(all.ids).not.toContain(x.id)
    expect(all.ids).not.toContain(y.id)
    // A nextToken from one workspace does not reveal another's bots.
    for (let i = 0; i < 3; i++) await createBot({}, wsY)
    const page = await list('pageSize=1', wsY)
    const leaked = await list(`pageSize=100&nextToken=${encodeURIComponent(page.body.meta.nextToken)}`, wsX)
    expect(leaked.status).toBe(200)
    for (const b of leaked.body.bots as Summary[]) expect(b.id).toBe(x.id)
  })
})
