/**
 * The program a hosted process runs (CommonJS, no dependency: hosted-processes.ts writes it beside the bundle, the
 * only directory the process may read). It loads the bundle `bp build` made (`exports.default` a Bot or an
 * Integration of @botpress/sdk, `exports.handler` its handler), serves that handler on a loopback port it picks,
 * and tells Parley the port over the IPC channel. Every request must carry the process's own secret
 * (x-parley-hosted, given once in the environment and removed from it before the bundle loads), so nothing else
 * on the machine, another hosted process included, can post events to it. The request and answer are what the
 * SDK's own `bot.start(port)` reads and writes (body, path, query, method, lowercased headers; status, headers,
 * body; a throw answers 500 `{ error }`). The process exits when Parley goes (the IPC channel closes) and on
 * SIGTERM.
 */
export const LAUNCHER_SOURCE = String.raw`'use strict'
const http = require('node:http')
const secret = process.env.PARLEY_HOSTED_SECRET
delete process.env.PARLEY_HOSTED_SECRET
process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))

let loaded
try {
  loaded = require(process.argv[2])
} catch (err) {
  console.error('The bundle did not load: ' + (err && err.stack || err))
  process.exit(78)
}
const impl = loaded && (loaded.default || loaded)
const handler = impl && typeof impl.handler === 'function' ? impl.handler : loaded && typeof loaded.handler === 'function' ? loaded.handler : undefined
if (!handler) {
  console.error('The bundle exports no handler (exports.default.handler or exports.handler): deploy the bundle bp build makes (.botpress/dist/index.cjs)')
  process.exit(78)
}

const server = http.createServer((req, res) => {
  if (!secret || req.headers['x-parley-hosted'] !== secret) {
    res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"forbidden"}')
    return
  }
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', async () => {
    const headers = {}
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i].toLowerCase()] = req.rawHeaders[i + 1]
    delete headers['x-parley-hosted']
    const url = new URL(req.url || '/', 'http://hosted')
    const method = (req.method || 'GET').toUpperCase()
    try {
      const answer = await handler({
        body: method === 'POST' || method === 'PUT' || method === 'PATCH' ? Buffer.concat(chunks).toString('utf8') : undefined,
        path: url.pathname, query: url.search.replace(/^\?/, ''), headers, method,
      })
      res.writeHead((answer && answer.status) || 200, (answer && answer.headers) || {}).end((answer && answer.body) || '{}')
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      console.error('Error while handling request: ' + message)
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: message || 'Internal error occured' }))
    }
  })
})
server.keepAliveTimeout = 60000
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }))
`
