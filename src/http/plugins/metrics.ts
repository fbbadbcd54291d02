import type { FastifyInstance } from 'fastify'
import type { MetricsRegistry } from '../../lib/metrics.js'

/**
 * GET /metrics: the instance's registry (src/lib/metrics.ts) as Prometheus text. The HTTP series are
 * registered here: requests by method, route pattern (never ids or keys) and status, and a latency
 * histogram; the other parts of the instance register theirs (compose.ts).
 */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

export function registerMetrics(app: FastifyInstance, metrics: MetricsRegistry): void {
  const requests = metrics.counter('parley_http_requests_total', 'HTTP requests answered, by method, route pattern and status', ['method', 'route', 'status'])
  const duration = metrics.histogram('parley_http_request_duration_seconds', 'Time to answer an HTTP request, in seconds', BUCKETS)
  metrics.collect('process_resident_memory_bytes', 'Resident set size of the process, in bytes', () => process.memoryUsage.rss())

  app.addHook('onResponse', (request, reply, done) => {
    requests.inc({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) })
    duration.observe(reply.elapsedTime / 1000)
    done()
  })

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const text = await metrics.render((name, err) => request.log.warn({ err, metric: name }, 'metrics: a series could not be read'))
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text)
  })
}
