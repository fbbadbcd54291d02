// Minimal types for the parts of autocannon@8's programmatic API that bench/run.ts uses
// (autocannon ships no types and @types/autocannon is not installed).
declare module 'autocannon' {
  export interface AutocannonClient {
    setHeadersAndBody(headers: Record<string, string>, body: string | Buffer): void
  }
  export interface AutocannonOptions {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    timeout?: number
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE'
    headers?: Record<string, string>
    body?: string | Buffer
    setupClient?: (client: AutocannonClient) => void
  }
  export interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p97_5: number
    p99: number
    p99_9: number
  }
  export interface AutocannonResult {
    requests: Histogram
    latency: Histogram
    throughput: Histogram
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    statusCodeStats?: Record<string, { count: number }>
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>
  export default autocannon
}
