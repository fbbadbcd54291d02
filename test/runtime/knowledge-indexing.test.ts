/**
 * Background indexing across a restart and under load: a file acknowledged but not yet indexed when the
 * server stops is indexed by the next start; a large file is indexed in slices, so API requests made
 * meanwhile are answered while it is still indexing_pending, and the whole file ends up searchable.
 */
import { Client } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { newDataPlace, startOn, uid, type DataPlace } from './helpers.js'

describe('knowledge: background indexing', () => {
  let place: DataPlace
  beforeAll(async () => {
    place = await newDataPlace()
  })
  afterAll(async () => place?.remove())

  it('a file left indexing_pending by a stop is indexed after the restart', async () => {
    const first = await startOn(place)
    const client = () => new Client({ apiUrl: server.baseUrl, token: first.credentials.token, botId: first.credentials.botId })
    let server = first
    // Stop the indexer only: the upload is acknowledged and marked pending, as if the process died right after.
    await first.app.services.files.knowledge.stop()
    const { file } = await client().uploadFile({ key: uid('restart') + '.txt', content: 'The night watchman checks the boiler room at midnight.', index: true })
    expect((await client().getFile({ id: file.id })).file.status).toBe('indexing_pending')
    expect((await client().searchFiles({ query: 'boiler room' })).passages).toEqual([])
    await first.stop()

    server = await startOn(place)
    try {
      await server.app.services.files.knowledge.idle()
      expect((await client().getFile({ id: file.id })).file.status).toBe('indexing_completed')
      const { passages } = await client().searchFiles({ query: 'who checks the boiler?' })
      expect(passages[0]?.file.id).toBe(file.id)
    } finally {
      await server.stop()
    }
  })
})

describe('knowledge: a large file', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley({ listen: true })
  })
  afterAll(async () => h?.close())

  it('is indexed in slices: requests are served meanwhile, and every part ends up searchable', async () => {
    const client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, botId: h.credentials.botId })
    const sections = Array.from({ length: 6000 }, (_, i) => `## Section ${i}\n\nItem number${i} is stored on shelf ${i % 97} of aisle ${i % 13}, next to the spare gaskets and valves.\n`)
    const content = `# Warehouse inventory\n\n${sections.join('\n')}`
    expect(content.length).toBeGreaterThan(500_000)
    const { file } = await client.uploadFile({ key: uid('inventory') + '.md', content, index: true })
    // Answered while the indexer works: the event loop is not held by the file.
    const during = await client.getFile({ id: file.id })
    expect(during.file.status).toBe('indexing_pending')
    const kbs = await client.listKnowledgeBases({})
    expect(Array.isArray(kbs.knowledgeBases)).toBe(true)
    // Progress is visible in the file while it is indexed (a Parley extension field), and only moves forward.
    const seen: { passagesIndexed: number; passagesTotal: number }[] = []
    for (;;) {
      const { file: now } = (await client.getFile({ id: file.id })) as { file: { status: string; indexingProgress?: { passagesIndexed: number; passagesTotal: number } } }
      if (now.indexingProgress) seen.push(now.indexingProgress)
      if (now.status !== 'indexing_pending') break
    }
    expect(seen.length).toBeGreaterThan(0)
    for (let i = 0; i < seen.length; i++) {
      expect(seen[i]!.passagesIndexed).toBeLessThanOrEqual(seen[i]!.passagesTotal)
      if (i > 0) expect(seen[i]!.passagesIndexed).toBeGreaterThanOrEqual(seen[i - 1]!.passagesIndexed)
    }
    expect(seen[0]!.passagesTotal).toBeGreaterThanOrEqual(6000)
    await h.app.services.files.knowledge.idle()
    expect((await client.getFile({ id: file.id })).file.status).toBe('indexing_completed')
    const last = await client.searchFiles({ query: 'number5999', limit: 3 })
    expect(last.passages[0]?.content).toContain('number5999')
    const listed = await client.listFilePassages({ id: file.id, pageSize: 200 })
    expect(listed.passages.length).toBe(200)
    expect(listed.meta.nextToken).toBeDefined()
  })
})
