/**
 * A plain node:http server standing in for a remote bot (a bot with a `url`): it records every
 * request Parley sends (headers, raw body, parsed JSON, arrival order) and answers with what the
 * test's `answer` function returns (status, delay, or a dropped connection). For protocol and fault
 * tests; real @botpress/sdk programs are started with test/helpers/sdk-bot.ts.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders
  raw: string
  body: any
  at: number
}

/** What to do with a request: answer `status` (with `headers`, after `delayMs`), or `drop` the connection without answering. */
export type Answer = { status?: number; body?: string; headers?: Record<string, string>; delayMs?: number; drop?: boolean }

export interface BotReceiver {
  url: string
  requests: ReceivedRequest[]
  port: number
  /** Requests of `event_received`, in arrival order. */
  events(): ReceivedRequest[]
  /** Changes how the next requests are answered. */
  answer: (req: ReceivedRequest) => Answer | Promise<Answer>
  /** Resolves when `predicate` holds over the requests (re-checked on each one); rejects after timeoutMs. */
  until(predicate: (requests: ReceivedRequest[]) => boolean, what: string, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

/** `port`: listen there (a bot restarted at the same url); a free one by default. */
export async function startBotReceiver(answer: BotReceiver['answer'] = () => ({ status: 200 }), port = 0): Promise<BotReceiver> {
  const requests: ReceivedRequest[] = []
  let waiters: (() => void)[] = []
  const receiver: BotReceiver = {
    url: '',
    port: 0,
    requests,
    events: () => requests.filter((r) => r.headers['x-bp-operation'] === 'event_received'),
    answer,
    async until(predicate, what, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (!predicate(requests)) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`timed out waiting for ${what}; received ${requests.length} request(s): ${JSON.stringify(requests.map((r) => [r.headers['x-bp-operation'], r.headers['x-bp-type'], r.body?.event?.id]))}`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200))
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: unknown
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
      const received = { headers: req.headers, raw, body, at: Date.now() }
      requests.push(received)
      const w = waiters
      waiters = []
      for (const wake of w) wake()
      const a = await receiver.answer(received)
      if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs))
      if (a.drop) {
        req.socket.destroy()
        return
      }
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers }).end(a.body ?? '{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.url = `http://127.0.0.1:${receiver.port}/`
  return receiver
}
