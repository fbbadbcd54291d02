import type { FastifyInstance } from 'fastify'

/**
 * Prometheus text metrics without a dependency: request counts by method/route/status and a
 * latency histogram, plus gauges supplied by the caller (open streams, memory).
 */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

export function registerMetrics(app: FastifyInstance, gauges: () => Record<string, number>): void {
  const counts = new Map<string, number>()
  const histogram = new Array<number>(BUCKETS.length + 1).fill(0)
  let sum = 0
  let total = 0

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `method="${request.method}",route="${route.replace(/["\\\n]/g, '_')}",status="${reply.statusCode}"`
    counts.set(key, (counts.get(key) ?? 0) + 1)
    const seconds = reply.elapsedTime / 1000
    const bucket = BUCKETS.findIndex((b) => seconds <= b)
    histogram[bucket === -1 ? BUCKETS.length : bucket]!++
    sum += seconds
    total++
  })

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const lines: string[] = ['# TYPE parley_http_requests_total counter']
    for (const [labels, n] of counts) lines.push(`parley_http_requests_total{${labels}} ${n}`)
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
