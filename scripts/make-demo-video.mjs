#!/usr/bin/env node
/**
 * Makes assets/demo/sample.webm, the demo bot's video, without a video encoder on the machine: Chromium (Debian's,
 * through playwright-core, as the browser tests use it) draws a short animation on a canvas and records it with
 * MediaRecorder (canvas.captureStream) as VP8 WebM. The script checks that the file says its duration (the EBML
 * Duration of the Segment's Info, which Chromium writes when the recording stops), so players show the length and
 * can seek.
 *
 *   node scripts/make-demo-video.mjs [out.webm]      (PARLEY_CHROMIUM: another Chromium binary)
 *
 * Run once; the result is committed. Deterministic enough (the same drawing), not byte-identical between runs.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const OUT = process.argv[2] ?? fileURLToPath(new URL('../assets/demo/sample.webm', import.meta.url))
const CHROMIUM = process.env.PARLEY_CHROMIUM || '/usr/bin/chromium'
const SECONDS = 4
const WIDTH = 480
const HEIGHT = 270
// EBML element ids (Matroska): used by durationMs below.
const SEGMENT = 0x18538067
const INFO = 0x1549a966
const DURATION = 0x4489
const TIMECODE_SCALE = 0x2ad7b1

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required'] })
try {
  const page = await browser.newPage()
  await page.setContent('<!doctype html><canvas></canvas>')
  const result = await page.evaluate(async ({ seconds, width, height }) => {
    const canvas = document.querySelector('canvas')
    canvas.width = width
    canvas.height = height
    const ctx = canvas.getContext('2d')
    const draw = (t) => {
      // A sky that turns from blue to dusk, a sun that crosses it, and a speech bubble that says hello.
      const k = t / seconds
      const sky = ctx.createLinearGradient(0, 0, 0, height)
      sky.addColorStop(0, `hsl(${220 - 40 * k}, 70%, ${55 - 20 * k}%)`)
      sky.addColorStop(1, `hsl(${200 - 30 * k}, 80%, ${80 - 25 * k}%)`)
      ctx.fillStyle = sky
      ctx.fillRect(0, 0, width, height)
      ctx.fillStyle = '#ffd166'
      ctx.beginPath()
      ctx.arc(40 + (width - 80) * k, 70 + 30 * Math.sin(Math.PI * k), 26, 0, 2 * Math.PI)
      ctx.fill()
      ctx.fillStyle = '#1b3a7a'
      ctx.beginPath()
      ctx.moveTo(0, height)
      ctx.lineTo(width * 0.3, height * 0.55)
      ctx.lineTo(width * 0.55, height * 0.8)
      ctx.lineTo(width * 0.75, height * 0.6)
      ctx.lineTo(width, height)
      ctx.fill()
      const bob = 6 * Math.sin(2 * Math.PI * t)
      ctx.fillStyle = '#ffffff'
      ctx.beginPath()
      ctx.roundRect(width / 2 - 110, 120 + bob, 220, 64, 18)
      ctx.moveTo(width / 2 - 20, 182 + bob)
      ctx.lineTo(width / 2 - 40, 205 + bob)
      ctx.lineTo(width / 2, 182 + bob)
      ctx.fill()
      ctx.fillStyle = '#2b59c3'
      ctx.font = 'bold 28px sans-serif'
      ctx.textAlign = 'center'
      ctx.textBaseline = 'middle'
      const text = 'Hello from Parley'
      ctx.fillText(text.slice(0, Math.min(text.length, Math.floor(1 + t * 8))), width / 2, 152 + bob)
    }
    draw(0)
    const stream = canvas.captureStream(24)
    const mimeType = ['video/webm;codecs=vp8', 'video/webm'].find((type) => MediaRecorder.isTypeSupported(type))
    if (!mimeType) throw new Error('this Chromium cannot record WebM')
    const recorder = new MediaRecorder(stream, { mimeType, videoBitsPerSecond: 250_000 })
    const chunks = []
    recorder.ondataavailable = (event) => event.data.size > 0 && chunks.push(event.data)
    const stopped = new Promise((resolve) => (recorder.onstop = resolve))
    const start = performance.now()
    recorder.start()
    await new Promise((resolve) => {
      const frame = () => {
        const t = (performance.now() - start) / 1000
        draw(Math.min(t, seconds))
        if (t < seconds) requestAnimationFrame(frame)
        else resolve()
      }
      requestAnimationFrame(frame)
    })
    recorder.stop()
    await stopped
    const bytes = new Uint8Array(await new Blob(chunks, { type: mimeType }).arrayBuffer())
    let binary = ''
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
    return { mimeType, base64: btoa(binary), ms: performance.now() - start }
  }, { seconds: SECONDS, width: WIDTH, height: HEIGHT })
  const webm = Buffer.from(result.base64, 'base64')
  const ms = durationMs(webm)
  if (!ms) throw new Error('the recording has no duration in its header (an older Chromium?): players could not seek in it')
  writeFileSync(OUT, webm)
  console.log(`${OUT}: ${webm.length} bytes, ${result.mimeType}, ${(ms / 1000).toFixed(2)} s, ${WIDTH}×${HEIGHT}`)
} finally {
  await browser.close()
}

// ---- EBML: read the Duration of the Segment's Info ----

/** Reads an EBML variable-length integer at `pos`: its length in bytes and its value (marker bit removed). */
function vint(buf, pos) {
  const first = buf[pos]
  let length = 1
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length++
  if (length > 8) throw new Error(`bad EBML size at ${pos}`)
  let value = first & (0xff >> length)
  for (let i = 1; i < length; i++) value = value * 256 + buf[pos + i]
  return { length, value }
}

/** An element at `pos`: its ID (with its marker bits, as IDs are written), where its data starts and its size. */
function element(buf, pos) {
  const idLength = vint(buf, pos).length
  const id = buf.readUIntBE(pos, idLength)
  const size = vint(buf, pos + idLength)
  return { id, data: pos + idLength + size.length, size: size.value }
}

/**
 * The duration in ms written in Segment > Info, or undefined. Older Chromiums wrote none (a live recording has no
 * known end): players then show no length and cannot seek, so the script refuses such a file.
 */
function durationMs(buf) {
  const header = element(buf, 0)
  const segment = element(buf, header.data + header.size)
  if (segment.id !== SEGMENT) throw new Error('no Segment after the EBML header')
  for (let pos = segment.data; pos < buf.length;) {
    const child = element(buf, pos)
    if (child.id === INFO) {
      let scale = 1_000_000
      let duration
      for (let p = child.data; p < child.data + child.size;) {
        const field = element(buf, p)
        if (field.id === TIMECODE_SCALE) scale = buf.readUIntBE(field.data, field.size)
        if (field.id === DURATION) duration = field.size === 4 ? buf.readFloatBE(field.data) : buf.readDoubleBE(field.data)
        p = field.data + field.size
      }
      return duration === undefined ? undefined : (duration * scale) / 1_000_000
    }
    pos = child.data + child.size
  }
  return undefined
}
