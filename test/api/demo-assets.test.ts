/**
 * The demo bot's files, served by Parley (GET /demo/assets/{file}, from assets/demo/): the video is a WebM made by
 * scripts/make-demo-video.mjs, served as video/webm with byte ranges (what media elements ask for to seek).
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'

const WEBM = readFileSync(new URL('../../assets/demo/sample.webm', import.meta.url))

describe('demo assets', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startParley()
  })
  afterAll(async () => h?.close())

  const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers })

  it('serves the demo video as WebM (EBML magic bytes), small, with ranges advertised', async () => {
    const res = await get('/demo/assets/sample.webm')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('video/webm')
    expect(res.headers['accept-ranges']).toBe('bytes')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.rawPayload.subarray(0, 4)).toEqual(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))
    expect(res.rawPayload.includes(Buffer.from('webm'))).toBe(true) // the EBML DocType
    expect(res.rawPayload.length).toBe(WEBM.length)
    expect(res.rawPayload.length).toBeLessThan(200 * 1024)
  })

  it('answers a byte range with 206 and Content-Range; the end of the file too (where its index is)', async () => {
    const start = await get('/demo/assets/sample.webm', { range: 'bytes=0-3' })
    expect(start.statusCode).toBe(206)
    expect(start.headers['content-range']).toBe(`bytes 0-3/${WEBM.length}`)
    expect(start.headers['content-length']).toBe('4')
    expect(start.rawPayload).toEqual(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))
    const tail = await get('/demo/assets/sample.webm', { range: 'bytes=-100' })
    expect(tail.statusCode).toBe(206)
    expect(tail.headers['content-range']).toBe(`bytes ${WEBM.length - 100}-${WEBM.length - 1}/${WEBM.length}`)
    expect(tail.rawPayload).toEqual(WEBM.subarray(WEBM.length - 100))
    const open = await get('/demo/assets/sample.webm', { range: 'bytes=1000-' })
    expect(open.statusCode).toBe(206)
    expect(open.rawPayload).toEqual(WEBM.subarray(1000))
  })

  it('serves the whole file for a range it does not take (several, unsatisfiable, malformed)', async () => {
    for (const range of ['bytes=0-1,4-5', `bytes=${WEBM.length}-`, 'bytes=x-y', 'lines=1-2']) {
      const res = await get('/demo/assets/sample.webm', { range })
      expect(res.statusCode, range).toBe(200)
      expect(res.rawPayload.length, range).toBe(WEBM.length)
    }
    // The other demo files take ranges too.
    const wav = await get('/demo/assets/sample.wav', { range: 'bytes=0-3' })
    expect(wav.statusCode).toBe(206)
    expect(wav.rawPayload.toString('latin1')).toBe('RIFF')
  })
})
