/**
 * Knowledge bases through the official @botpress/client@1.45.0 over real HTTP: indexing of uploaded files
 * (status indexing_pending → indexing_completed / indexing_failed), searchFiles with scores and tag filters,
 * listFilePassages paging, knowledge base CRUD, replacement and deletion updating the index, another
 * bot's files never leaking, and hostile queries (FTS syntax, NUL, huge, empty) never answering 5xx.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { botApiKey, secondBot } from '../api/files-helpers.js'
import { makePdf } from '../knowledge/pdf.js'

const uid = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`

async function indexed(client: Client, id: string): Promise<Awaited<ReturnType<Client['getFile']>>['file']> {
  for (let i = 0; i < 400; i++) {
    const { file } = await client.getFile({ id })
    if (file.status !== 'indexing_pending' && file.status !== 'upload_completed') return file
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`file ${id} still pending`)
}

describe('e2e: knowledge bases and search (official client)', () => {
  let h: Harness
  let client: Client

  beforeAll(async () => {
    h = await startParley({ listen: true })
    client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: h.credentials.botId })
  })
  afterAll(async () => h?.close())

  it('indexes Markdown, searches it with scores, lists its passages in order', async () => {
    const md = '# Returns policy\n\nYou can return any unworn item within 30 days of delivery for a full refund.\n\n## Exchanges\n\nExchanges for another size are free of charge and ship within two business days.\n'
    const { file } = await client.uploadFile({ key: uid('returns') + '.md', content: md, index: true, tags: { topic: 'shop' } })
    expect(['indexing_pending', 'indexing_completed']).toContain((await client.getFile({ id: file.id })).file.status)
    const done = await indexed(client, file.id)
    expect(done.status).toBe('indexing_completed')

    const { passages } = await client.searchFiles({ query: 'how long do I have to send back a purchase for a refund?' })
    expect(passages.length).toBeGreaterThan(0)
    expect(passages[0]!.file.id).toBe(file.id)
    expect(passages[0]!.content).toContain('30 days')
    expect(passages[0]!.score).toBeGreaterThan(0)
    for (let i = 1; i < passages.length; i++) expect(passages[i - 1]!.score).toBeGreaterThanOrEqual(passages[i]!.score)

    const listed = await client.listFilePassages({ id: file.id })
    expect(listed.passages.map((p) => p.meta.position)).toEqual([...listed.passages.keys()])
    expect(listed.passages.map((p) => p.content).join('\n')).toContain('two business days')
  })

  it('indexes a PDF with page numbers, and reports unsupported or broken content as indexing_failed', async () => {
    const pdf = makePdf([['Warranty terms.', 'The blender motor is covered for five years.'], ['Cleaning.', 'Rinse the jug with warm soapy water after each use.']])
    const { file } = await client.uploadFile({ key: uid('manual') + '.pdf', content: pdf, index: true })
    expect((await indexed(client, file.id)).status).toBe('indexing_completed')
    const { passages } = await client.searchFiles({ query: 'warm soapy water jug', tags: {} })
    const hit = passages.find((p) => p.file.id === file.id)
    expect(hit?.meta.pageNumber).toBe(2)

    const broken = await client.uploadFile({ key: uid('broken') + '.pdf', content: Buffer.from('%PDF-1.4 not really'), index: true })
    const failed = await indexed(client, broken.file.id)
    expect(failed.status).toBe('indexing_failed')
    expect(failed.failedStatusReason).toMatch(/PDF/)
    const image = await client.uploadFile({ key: uid('pic') + '.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), index: true })
    const imageFile = await indexed(client, image.file.id)
    expect(imageFile.status).toBe('indexing_failed')
    expect(imageFile.failedStatusReason).toMatch(/cannot be indexed/)
    // Not indexed: stays upload_completed and never appears in search.
    const plain = await client.uploadFile({ key: uid('plain') + '.txt', content: 'zanzibarquux appears only here' })
    expect((await client.getFile({ id: plain.file.id })).file.status).toBe('upload_completed')
    expect((await client.searchFiles({ query: 'zanzibarquux' })).passages).toEqual([])
  })

  it('replacing a file re-indexes it; deleting it removes its passages', async () => {
    const key = uid('faq') + '.txt'
    const first = await client.uploadFile({ key, content: 'The office parrot is named Kiwi.', index: true })
    await indexed(client, first.file.id)
    expect((await client.searchFiles({ query: 'parrot Kiwi' })).passages.some((p) => p.file.key === key)).toBe(true)
    const second = await client.uploadFile({ key, content: 'The office tortoise is named Basil.', index: true })
    await indexed(client, second.file.id)
    expect((await client.searchFiles({ query: 'parrot Kiwi' })).passages.some((p) => p.file.key === key)).toBe(false)
    expect((await client.searchFiles({ query: 'tortoise' })).passages.some((p) => p.file.key === key)).toBe(true)
    // Re-uploaded without index: no longer searchable, and its passages are gone.
    const third = await client.uploadFile({ key, content: 'The office tortoise is named Basil.' })
    expect((await client.getFile({ id: third.file.id })).file.status).toBe('upload_completed')
    expect((await client.searchFiles({ query: 'tortoise' })).passages.some((p) => p.file.key === key)).toBe(false)
    expect((await client.listFilePassages({ id: key })).passages).toEqual([])
    await client.uploadFile({ key, content: 'The office tortoise is named Basil.', index: true })
    await indexed(client, third.file.id)
    expect((await client.searchFiles({ query: 'tortoise' })).passages.some((p) => p.file.key === key)).toBe(true)
    await client.deleteFile({ id: key })
    expect((await client.searchFiles({ query: 'tortoise Basil' })).passages.some((p) => p.file.key === key)).toBe(false)
  })

  it('knowledge bases: create, list, update, delete; search restricted to a knowledge base by its kbId tag', async () => {
    const { knowledgeBase: kb } = await client.createKnowledgeBase({ name: 'Support', tags: { team: 'support' } })
    expect(kb).toMatchObject({ name: 'Support', tags: { team: 'support' } })
    const inKb = await client.uploadFile({ key: uid('kb') + '.txt', content: 'Lighthouse keepers refill the lamp oil weekly.', index: true, tags: { kbId: kb.id } })
    const outside = await client.uploadFile({ key: uid('nokb') + '.txt', content: 'Lighthouse tours start at noon.', index: true })
    await indexed(client, inKb.file.id)
    await indexed(client, outside.file.id)
    const scoped = await client.searchFiles({ query: 'lighthouse', tags: { kbId: kb.id } })
    expect(scoped.passages.map((p) => p.file.id)).toEqual([inKb.file.id])

    const listed = await client.listKnowledgeBases({})
    expect(listed.knowledgeBases.find((k) => k.id === kb.id)).toMatchObject({ name: 'Support', createdAt: expect.any(String) })
    const { knowledgeBase: renamed } = await client.updateKnowledgeBase({ id: kb.id, name: 'Help desk', tags: { team: null as unknown as string, lang: 'en' } })
    expect(renamed).toMatchObject({ id: kb.id, name: 'Help desk', tags: { lang: 'en' } })
    expect((await client.listKnowledgeBases({ tags: { lang: 'en' } })).knowledgeBases.map((k) => k.id)).toContain(kb.id)
    await client.deleteKnowledgeBase({ id: kb.id })
    await expect(client.deleteKnowledgeBase({ id: kb.id })).rejects.toMatchObject({ code: 404 })
  })

  it('another bot never sees these passages, by search or by file id', async () => {
    const mine = await client.uploadFile({ key: uid('secret') + '.txt', content: 'The vault code is quasar seventeen.', index: true })
    await indexed(client, mine.file.id)
    const other = await secondBot(h)
    const otherClient = new Client({ apiUrl: h.baseUrl, token: await botApiKey(h, other), botId: other })
    expect((await otherClient.searchFiles({ query: 'vault code quasar' })).passages).toEqual([])
    await expect(otherClient.listFilePassages({ id: mine.file.id })).rejects.toMatchObject({ code: 404 })
  })

  it('hostile queries answer 200 or a clear 400, never 5xx', async () => {
    const queries = ['', '   ', '"', '"unbalanced', '*', 'foo*', 'NEAR(a b)', 'a NEAR b', '-minus', 'a:b', 'col:term', '(((', 'AND OR NOT',
      "'; DROP TABLE files; --", '\\', '!!&&||', 'ünïcödé façade', '🙂🙃', 'x'.repeat(4096), 'word '.repeat(800), '%_%', '^caret', '{near/2}']
    for (const query of queries) {
      const res = await fetch(`${h.baseUrl}/v1/files/search?query=${encodeURIComponent(query)}`, {
        headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': h.credentials.botId },
      })
      expect(res.status, query).toBe(200)
      expect(Array.isArray(((await res.json()) as { passages: unknown[] }).passages)).toBe(true)
    }
    for (const query of ['a\u0000b', 'x'.repeat(5000)]) {
      const res = await fetch(`${h.baseUrl}/v1/files/search?query=${encodeURIComponent(query)}`, {
        headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': h.credentials.botId },
      })
      expect(res.status, JSON.stringify(query.slice(0, 10))).toBe(400)
    }
    const missing = await fetch(`${h.baseUrl}/v1/files/search`, { headers: { authorization: `Bearer ${h.credentials.token}`, 'x-bot-id': h.credentials.botId } })
    expect(missing.status).toBe(400)
  })
})
