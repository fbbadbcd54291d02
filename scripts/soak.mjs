#!/usr/bin/env node
// A soak, by hand (docs/testing.md, "Soak"): `node dist/cli.js serve` with the demo bot answering every message,
// createMessage at a fixed rate over 20 conversations, SSE listeners opened and closed over and over; the server's
// resident memory, open file descriptors and threads printed every 20 s. Run `npm run build` first.
//
//   SOAK_MIN=10 SOAK_RATE=300 node scripts/soak.mjs
//   SOAK_SNAPSHOTS=90,400 node scripts/soak.mjs     heap snapshots of the server at those seconds (in the run's
//                                                   directory, printed first); compare two in Chrome's DevTools
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const MINUTES = Number(process.env.SOAK_MIN ?? 10)
const RATE = Number(process.env.SOAK_RATE ?? 300)
const SNAPSHOTS = (process.env.SOAK_SNAPSHOTS ?? '').split(',').filter(Boolean).map(Number)
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'parley-soak-'))
const port = 41000 + Math.floor(Math.random() * 1000)
const nodeArgs = SNAPSHOTS.length > 0 ? ['--heapsnapshot-signal=SIGUSR2'] : []
const env = { ...process.env, PARLEY_DATA_DIR: join(dir, 'data'), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }
const child = spawn(process.execPath, [...nodeArgs, cli, 'serve'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] })
console.log(`run directory ${dir}`)

const base = `http://127.0.0.1:${port}`
for (const started = Date.now(); ; ) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break
  } catch {
    if (Date.now() - started > 60_000) throw new Error('the server did not answer /healthz within 60 s')
  }
  await new Promise((r) => setTimeout(r, 200))
}
const credentials = JSON.parse(readFileSync(join(dir, 'data', 'credentials.json'), 'utf8'))
const url = `${base}/${credentials.chat.webhookId}`
const post = async (path, key, body) => {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(key && { 'x-user-key': key }) }, body: JSON.stringify(body) })
  return res.json()
}
const conversations = []
for (let i = 0; i < 20; i++) {
  const user = await post('/users', undefined, {})
  const { conversation } = await post('/conversations', user.key, {})
  conversations.push({ key: user.key, id: conversation.id })
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
let sent = 0
let answered = 0
let failed = 0
let listens = 0
const sample = () => {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024
  const threads = Number(/Threads:\s+(\d+)/.exec(status)[1])
  const fds = readdirSync(`/proc/${child.pid}/fd`).length
  console.log(`${new Date().toISOString().slice(11, 19)}  sent ${sent}  201 ${answered}  failed ${failed}  streams ${listens}  rss ${rss.toFixed(0)} MB  fds ${fds}  threads ${threads}`)
}
sample()
const end = Date.now() + MINUTES * 60_000
const sampler = setInterval(sample, 20_000)
for (const at of SNAPSHOTS) setTimeout(() => { console.log(`heap snapshot at ${at} s (${sent} messages sent)`); child.kill('SIGUSR2') }, at * 1000)

const send = () => {
  const c = conversations[sent++ % conversations.length]
  const body = JSON.stringify({ conversationId: c.id, payload: { type: 'text', text: `hello ${sent}` } })
  const req = http.request(`${url}/messages`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-user-key': c.key } }, (res) => {
    res.resume()
    res.on('end', () => (res.statusCode === 201 ? answered++ : failed++))
  })
  req.on('error', () => failed++)
  req.end(body)
}
const sender = setInterval(() => { for (let i = 0; i < RATE / 20; i++) send() }, 50)
const churn = async () => {
  while (Date.now() < end) {
    const c = conversations[Math.floor(Math.random() * conversations.length)]
    await new Promise((resolve) => {
      const req = http.get(`${url}/conversations/${c.id}/listen`, { headers: { 'x-user-key': c.key, accept: 'text/event-stream' } }, (res) => {
        listens++
        res.resume()
        setTimeout(() => { req.destroy(); resolve() }, 200 + Math.random() * 1800)
      })
      req.on('error', () => resolve())
    })
  }
}
await Promise.all(Array.from({ length: 5 }, churn))
clearInterval(sender)
await new Promise((r) => setTimeout(r, 3000))
sample()
clearInterval(sampler)
child.kill('SIGTERM')
await new Promise((r) => child.once('exit', r))
// The run's directory stays only for its heap snapshots.
if (SNAPSHOTS.length === 0) rmSync(dir, { recursive: true, force: true })
process.exit(failed > 0 ? 1 : 0)
