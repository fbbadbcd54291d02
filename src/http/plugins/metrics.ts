import type { FastifyInstance } from 'fastify'

/**
 * Prometheus text metrics without a dependency: request counts by method/route/status and a
 * latency histogram, plus gauges supplied by the caller (open streams, memory).
 */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

export function registerMetrics(app: FastifyInstance, gauges: () => Record<string, number>): void {
  // route → method and status → counter with its label text, built once (not a regex per request).
  const counts = new Map<string, Map<string, { labels: string; n: number }>>()
  const histogram = new Array<number>(BUCKETS.length + 1).fill(0)
  let sum = 0
  let total = 0

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    let byRoute = counts.get(route)
    if (!byRoute) counts.set(route, (byRoute = new Map()))
    const key = `${request.method} ${reply.statusCode}`
    let counter = byRoute.get(key)
    if (!counter) {
      counter = { labels: `method="${request.method}",route="${route.replace(/["\\\n]/g, '_')}",status="${reply.statusCode}"`, n: 0 }
      byRoute.set(key, counter)
    }
    counter.n++
    const seconds = reply.elapsedTime / 1000
    let bucket = 0
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++
    histogram[bucket]!++
    sum += seconds
    total++
    done()
  })

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const lines: string[] = ['# TYPE parley_http_requests_total counter']
    for (const byRoute of counts.values()) for (const { labels, n } of byRoute.values()) lines.push(`parley_http_requests_total{${labels}} ${n}`)
    lines.push('# TYPE parley_http_request_duration_seconds histogram')
    let cumulative = 0
    BUCKETS.forEach((b, i) => {
      cumulative += histogram[i]!
      lines.push(`parley_http_request_duration_seconds_bucket{le="${b}"} ${cumulative}`)
    })
    lines.push(`parley_http_request_duration_seconds_bucket{le="+Inf"} ${total}`)
    lines.push(`parley_http_request_duration_seconds_sum ${sum}`, `parley_http_request_duration_seconds_count ${total}`)
    for (const [name, value] of Object.entries({ ...gauges(), process_resident_memory_bytes: process.memoryUsage.rss() })) {
      lines.push(`# TYPE ${name} gauge`, `${name} ${value}`)
    }
    return reply.type('text/plain; version=0.0.4').send(lines.join('\n') + '\n')
  })
}
