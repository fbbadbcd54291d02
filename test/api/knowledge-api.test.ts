/**
 * Knowledge-base and search routes with hostile or invalid input (app.inject): validation answers 4xx with
 * the Botpress error body, another bot's knowledge bases and passages are 404, viewers may read but not write,
 * and nothing answers 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { accountWithRole, botApiKey, createFile, expectError, ownerHeaders, secondBot } from './files-helpers.js'

describe('knowledge: API validation and isolation', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  const create = (payload: unknown, headers = ownerHeaders(h)) => h.app.inject({ method: 'POST', url: '/v1/files/knowledge-bases', headers, payload: payload as object })

  it('refuses invalid knowledge bases with 400', async () => {
    for (const payload of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(256) }, { name: 42 }, { name: 'ok', tags: { a: 1 } }, { name: 'ok', extra: true }, { name: 'a\u0001b' }]) {
      expectError(await create(payload), 400)
    }
    expectError(await h.app.inject({ method: 'POST', url: '/v1/files/knowledge-bases', headers: { ...ownerHeaders(h), 'content-type': 'application/json' }, payload: '{"name":"a\\u0000b"}' }), 400)
    const res = await create({ name: '  Trimmed  ' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().knowledgeBase.name).toBe('Trimmed')
  })

  it('another bot cannot read, change or delete a knowledge base, nor list its file passages', async () => {
    const { knowledgeBase } = (await create({ name: 'Mine' })).json() as { knowledgeBase: { id: string } }
    const file = await createFile(h, 'kb-isolation.txt', 'secret passage about quokkas', { index: true })
    await h.app.services.files.knowledge.idle()
    const other = await secondBot(h)
    const headers = { authorization: `Bearer ${await botApiKey(h, other)}`, 'x-bot-id': other }
    expectError(await h.app.inject({ method: 'PUT', url: `/v1/files/knowledge-bases/${knowledgeBase.id}`, headers, payload: { name: 'Stolen' } }), 404, 'ResourceNotFound')
    expectError(await h.app.inject({ method: 'DELETE', url: `/v1/files/knowledge-bases/${knowledgeBase.id}`, headers }), 404, 'ResourceNotFound')
    const list = await h.app.inject({ method: 'GET', url: '/v1/files/knowledge-bases', headers })
    expect(list.json().knowledgeBases).toEqual([])
    expectError(await h.app.inject({ method: 'GET', url: `/v1/files/${file.id}/passages`, headers }), 404, 'ResourceNotFound')
    const search = await h.app.inject({ method: 'GET', url: `/v1/files/search?query=quokkas`, headers })
    expect(search.json().passages).toEqual([])
    // Searching a knowledge base of another bot by id is not found either.
    const mine = await h.app.inject({ method: 'GET', url: `/v1/files/search?query=quokkas`, headers: ownerHeaders(h) })
    expect(mine.json().passages.map((p: { file: { id: string } }) => p.file.id)).toEqual([file.id])
  })

  it('viewers may search and list; writing knowledge bases needs a developer', async () => {
    const viewer = await accountWithRole(h, 'viewer')
    const headers = ownerHeaders(h, { authorization: `Bearer ${viewer.token}` })
    expect((await h.app.inject({ method: 'GET', url: '/v1/files/search?query=anything', headers })).statusCode).toBe(200)
    expect((await h.app.inject({ method: 'GET', url: '/v1/files/knowledge-bases', headers })).statusCode).toBe(200)
    expectError(await create({ name: 'Nope' }, headers), 403)
  })

  it('bad paging tokens, sizes and ids answer 4xx, never 5xx', async () => {
    const file = await createFile(h, 'kb-paging.txt', 'one passage', { index: true })
    await h.app.services.files.knowledge.idle()
    for (const url of [
      `/v1/files/${file.id}/passages?nextToken=forged`, `/v1/files/${file.id}/passages?pageSize=0`, `/v1/files/${file.id}/passages?pageSize=1000`,
      '/v1/files/knowledge-bases?nextToken=%%%', '/v1/files/knowledge-bases?pageSize=-1', '/v1/files/search?query=a&limit=0', '/v1/files/search?query=a&limit=51',
      '/v1/files/search?query=a&contextDepth=99', '/v1/files/search?query=a&tags=plain', '/v1/files/no-such-file/passages',
    ]) {
      const res = await h.app.inject({ method: 'GET', url, headers: ownerHeaders(h) })
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400)
      expect(res.statusCode, url).toBeLessThan(500)
    }
    const ctx = await h.app.inject({ method: 'GET', url: '/v1/files/search?query=passage&withContext=true&contextDepth=2', headers: ownerHeaders(h) })
    expect(ctx.statusCode, ctx.body).toBe(200)
    expect(ctx.json().passages[0].context).toEqual([expect.objectContaining({ type: 'current', offset: 0, text: 'one passage' })])
  })
})
