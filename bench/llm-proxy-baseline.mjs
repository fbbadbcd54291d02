// Baseline for `npm run bench -- llm-gateway`: the least a gateway in front of a model provider does. A bare
// node:http server that reads the request's body and forwards it, unchanged, to `${UPSTREAM}/chat/completions` over a
// keep-alive connection, and pipes the provider's answer back (JSON or SSE alike). No auth, no validation, no model
// resolution, no translation of the wire, no usage record, no log. What it costs over a direct call is the price of
// the extra HTTP hop on this machine: the floor under any gateway's overhead. Env: PORT, UPSTREAM.
import http from 'node:http'

const port = Number(process.env.PORT)
const upstream = new URL(`${process.env.UPSTREAM}/chat/completions`)
if (!port || !process.env.UPSTREAM) throw new Error('PORT and UPSTREAM are required')
const agent = new http.Agent({ keepAlive: true })

const server = http.createServer((req, res) => {
  if (req.method === 'GET') return res.end('ok')
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const out = http.request(upstream, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.byteLength } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json' })
      answer.pipe(res)
    })
    out.on('error', () => {
      res.writeHead(502)
      res.end()
    })
    out.end(body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(port, '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
