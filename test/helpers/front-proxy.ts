/**
 * A reverse proxy in front of a remote bot or an integration (a stand-in for the load balancer a deployment puts in
 * front of its program): it counts every POST it receives, by operation, and answers the next ones from a queue of
 * canned answers (`refuse`: a 503 while the program restarts, a 429 with Retry-After) instead of forwarding them.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FrontProxy {
  url: string
  /** POSTs received, in order: the x-bp-operation header, the raw body and when it arrived (Date.now()). */
  posts: { operation: string; body: string; at: number }[]
  /** Answers the next POST of `operation` with this status and headers (queued in order) instead of forwarding it. */
  refuse(operation: string, status: number, headers?: Record<string, string>): void
  /** POSTs of `operation` received so far. */
  count(operation: string): number
  close(): Promise<void>
}

export async function startFrontProxy(target: string): Promise<FrontProxy> {
  const canned: { operation: string; status: number; headers: Record<string, string> }[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const operation = String(req.headers['x-bp-operation'] ?? '')
      proxy.posts.push({ operation, body, at: Date.now() })
      const i = canned.findIndex((c) => c.operation === operation)
      if (i >= 0) {
        const [answer] = canned.splice(i, 1)
        res.writeHead(answer!.status, { 'content-type': 'text/plain', ...answer!.headers }).end('from the proxy')
        return
      }
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>
      fetch(new URL(req.url ?? '/', target), { method: req.method ?? 'POST', headers, ...(req.method !== 'GET' && { body }) }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text())
      }, () => res.writeHead(502).end('bad gateway'))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxy: FrontProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    posts: [],
    refuse: (operation, status, headers = {}) => void canned.push({ operation, status, headers }),
    count: (operation) => proxy.posts.filter((p) => p.operation === operation).length,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
  return proxy
}
