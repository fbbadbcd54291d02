/**
 * listFileTags (`GET /v1/files/tags`) and listFileTagValues (`GET /v1/files/tags/{tag}/values`) driven by the
 * official @botpress/client over real HTTP: distinct names and values of the bot's files in byte order, paged
 * with nextToken; other bots' tags never show; deleted and expired files drop out; the static `/tags` routes win
 * over a file whose key is "tags"; bad tokens, sizes and tag names are 400.
 */
import { randomUUID } from 'node:crypto'
import { Client, ForbiddenError, InvalidQueryError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { accountWithRole, expectError, ownerHeaders, secondBot } from './files-helpers.js'

const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`

describe('Files API: listFileTags and listFileTagValues', () => {
  let h: Harness
  let client: Client
  let otherBot: string
  const clientFor = (token: string, botId = h.credentials.botId) => new Client({ apiUrl: h.baseUrl, token, botId })

  /** Every page, following nextToken. */
  async function all<T extends { meta: { nextToken?: string } }>(list: (nextToken?: string) => Promise<T>, pick: (page: T) => string[]): Promise<string[][]> {
    const pages: string[][] = []
    let nextToken: string | undefined
    do {
      const page = await list(nextToken)
      pages.push(pick(page))
      nextToken = page.meta.nextToken
    } while (nextToken)
    return pages
  }

  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = clientFor(h.credentials.token)
    otherBot = await secondBot(h)
    await client.uploadFile({ key: uid('a'), content: 'a', tags: { color: 'red', size: 'L', 'a/b c': 'slash value' } })
    await client.uploadFile({ key: uid('b'), content: 'b', tags: { color: 'blue', size: 'L' } })
    await client.uploadFile({ key: uid('c'), content: 'c', tags: { color: 'Red', 'ünï': 'çödé' } })
    await client.upsertFile({ key: uid('pending'), size: 1, tags: { color: 'pending-but-tagged' } })
    await clientFor(h.credentials.token, otherBot).uploadFile({ key: uid('o'), content: 'o', tags: { secret: 'other-bot', color: 'green' } })
  })
  afterAll(async () => h?.close())

  it('lists the distinct tag names of the bot\'s files in byte order, paged', async () => {
    expect((await client.listFileTags({})).tags).toEqual(['a/b c', 'color', 'size', 'ünï'])
    const pages = await all((nextToken) => client.listFileTags({ pageSize: 3, nextToken }), (p) => p.tags)
    expect(pages).toEqual([['a/b c', 'color', 'size'], ['ünï']])
    // Another bot has its own.
    expect((await clientFor(h.credentials.token, otherBot).listFileTags({})).tags).toEqual(['color', 'secret'])
  })

  it('lists the distinct values of one tag, paged; names with slashes and Unicode work as path segments', async () => {
    const pages = await all((nextToken) => client.listFileTagValues({ tag: 'color', pageSize: 2, nextToken }), (p) => p.values)
    expect(pages).toEqual([['Red', 'blue'], ['pending-but-tagged', 'red']])
    expect((await client.listFileTagValues({ tag: 'size' })).values).toEqual(['L'])
    expect((await client.listFileTagValues({ tag: 'a/b c' })).values).toEqual(['slash value'])
    expect((await client.listFileTagValues({ tag: 'ünï' })).values).toEqual(['çödé'])
    expect(await client.listFileTagValues({ tag: 'secret' })).toEqual({ values: [], meta: {} })
    expect(await client.listFileTagValues({ tag: 'nope' })).toEqual({ values: [], meta: {} })
  })

  it('long values page with long tokens', async () => {
    const tag = uid('long')
    const values = ['x'.repeat(999) + '1', '😀'.repeat(500), 'x'.repeat(1000)]
    for (const value of values) await client.uploadFile({ key: uid('long'), content: 'l', tags: { [tag]: value } })
    const pages = await all((nextToken) => client.listFileTagValues({ tag, pageSize: 1, nextToken }), (p) => p.values)
    expect(pages.flat()).toEqual([...values].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))))
  })

  it('deleted, re-tagged and expired files drop out', async () => {
    const tag = uid('temp')
    const { file } = await client.uploadFile({ key: uid('t'), content: 't', tags: { [tag]: 'v1' } })
    expect((await client.listFileTags({ pageSize: 100 })).tags).toContain(tag)
    await client.updateFileMetadata({ id: file.id, tags: { [tag]: 'v2' } })
    expect((await client.listFileTagValues({ tag })).values).toEqual(['v2'])
    await h.store.files.updateFile(h.credentials.botId, file.id, { expiresAt: Date.now() - 1000 }, Date.now())
    expect((await client.listFileTags({ pageSize: 100 })).tags).not.toContain(tag)
    await h.store.files.updateFile(h.credentials.botId, file.id, { expiresAt: null }, Date.now())
    expect((await client.listFileTags({ pageSize: 100 })).tags).toContain(tag)
    await client.deleteFile({ id: file.id })
    expect((await client.listFileTags({ pageSize: 100 })).tags).not.toContain(tag)
    expect((await client.listFileTagValues({ tag })).values).toEqual([])
  })

  it('/tags routes before /{id}: a file keyed "tags" is still reachable by id', async () => {
    const { file } = await client.uploadFile({ key: 'tags', content: 'named tags' })
    expect(Array.isArray((await client.listFileTags({})).tags)).toBe(true)
    expect((await client.getFile({ id: file.id })).file.key).toBe('tags')
    expect((await client.listFilePassages({ id: file.id })).passages).toEqual([])
  })

  it('viewers may list; outsiders may not; bad tokens, page sizes and tag names are 400', async () => {
    const viewer = await accountWithRole(h, 'viewer')
    expect((await clientFor(viewer.token).listFileTags({})).tags).toContain('color')
    expect((await clientFor(viewer.token).listFileTagValues({ tag: 'color' })).values).toContain('red')
    const outsider = await accountWithRole(h, null)
    await expect(clientFor(outsider.token).listFileTags({})).rejects.toBeInstanceOf(ForbiddenError)
    await expect(clientFor(outsider.token).listFileTagValues({ tag: 'color' })).rejects.toBeInstanceOf(ForbiddenError)
    await expect(client.listFileTags({ nextToken: 'forged' })).rejects.toBeInstanceOf(InvalidQueryError)
    await expect(client.listFileTagValues({ tag: 'color', nextToken: 'forged' })).rejects.toBeInstanceOf(InvalidQueryError)
    // A token of one listing is a plain value cursor: in another listing it only moves the start, never errors.
    const token = (await client.listFileTags({ pageSize: 1 })).meta.nextToken!
    expect((await client.listFileTagValues({ tag: 'color', nextToken: token })).values).toBeInstanceOf(Array)
    for (const url of ['/v1/files/tags?pageSize=0', '/v1/files/tags?pageSize=101', '/v1/files/tags?nextToken=' + 'A'.repeat(5000),
      '/v1/files/tags/color/values?pageSize=abc', `/v1/files/tags/${'t'.repeat(101)}/values`, '/v1/files/tags/a%00b/values', '/v1/files/tags/%ED%A0%80/values']) {
      expectError(await h.app.inject({ method: 'GET', url, headers: ownerHeaders(h) }), 400)
    }
    expectError(await h.app.inject({ method: 'GET', url: '/v1/files/tags', headers: { 'x-bot-id': h.credentials.botId } }), 401, 'Unauthorized')
  })
})
