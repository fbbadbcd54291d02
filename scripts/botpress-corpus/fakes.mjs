// Stand-ins for the outside services Botpress's integrations call (each is a local http server that records
// what it gets), and a recording proxy in front of Parley for `bp deploy`.
import http from 'node:http'

function listen(server) {
  return new Promise((res) => server.listen(0, '127.0.0.1', () => res(`http://127.0.0.1:${server.address().port}`)))
}
const readBody = (req) => new Promise((res) => { const c = []; req.on('data', (d) => c.push(d)); req.on('end', () => res(Buffer.concat(c).toString('utf8'))) })
const parse = (raw, type = '') => {
  if (!raw) return {}
  if (type.includes('x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw))
  try { return JSON.parse(raw) } catch { return raw }
}

/** Records every request (Zapier's REST hooks, Make's webhook, the webhook-message template's target). */
export async function startCapture() {
  const requests = []
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req)
    requests.push({ method: req.method, path: req.url, headers: req.headers, body: parse(raw, req.headers['content-type']) })
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  })
  const url = await listen(server)
  return { url, requests, close: () => server.close() }
}

/** Telegram's Bot API as far as the integration uses it (setWebhook, sendMessage, sendChatAction, …). */
export async function startFakeTelegram() {
  const calls = []
  let nextMessageId = 5000
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req)
    const m = req.url.match(/^\/bot([^/]+)\/(\w+)/)
    const method = m?.[2] ?? '?'
    const body = parse(raw, req.headers['content-type'] ?? '')
    calls.push({ method, token: m?.[1], body })
    const ok = (result) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result }))
    if (method === 'getMe') return ok({ id: 123456789, is_bot: true, first_name: 'Corpus', username: 'corpus_bot' })
    if (method.startsWith('send')) {
      const chatId = Number(body.chat_id) || body.chat_id
      return ok({ message_id: nextMessageId++, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' }, text: body.text })
    }
    return ok(true)
  })
  const url = await listen(server)
  return { url, calls, close: () => server.close() }
}

/** A Telegram update as the Bot API POSTs it to a webhook. */
export function telegramUpdate(n, chatId, text) {
  return {
    update_id: 100000 + n,
    message: {
      message_id: n, date: Math.floor(Date.now() / 1000), text,
      chat: { id: chatId, type: 'private', first_name: 'Ada' },
      from: { id: chatId, is_bot: false, first_name: 'Ada', username: 'ada' },
    },
  }
}

/** Forwards to `target`, recording every request's method, path, status and (for non-2xx) answer body. */
export async function startRecordingProxy(target) {
  const exchanges = []
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req)
    const headers = { ...req.headers }
    delete headers.host
    delete headers['content-length']
    let status = 502, text = '', outHeaders = {}
    try {
      const r = await fetch(new URL(req.url, target), { method: req.method, headers, body: ['GET', 'HEAD'].includes(req.method) ? undefined : raw })
      status = r.status
      text = await r.text()
      outHeaders = { 'content-type': r.headers.get('content-type') ?? 'application/json' }
    } catch (e) { text = JSON.stringify({ message: `proxy: ${e.message}` }) }
    exchanges.push({ method: req.method, path: req.url, status, requestBytes: raw.length, body: status >= 300 ? text.slice(0, 600) : undefined })
    res.writeHead(status, outHeaders).end(text)
  })
  const url = await listen(server)
  return { url, exchanges, close: () => server.close() }
}
