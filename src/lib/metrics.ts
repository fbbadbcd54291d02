/**
 * The instance's metrics registry, rendered as Prometheus text (exposition format 0.0.4) by GET /metrics.
 * One registry per instance (compose.ts createServices); every part registers its series here with a
 * HELP text and a TYPE, so that each series in the output is preceded by both lines. No dependency.
 *
 * - counter: incremented here (`inc`), optionally by labels;
 * - histogram: observed here (`observe`), cumulative buckets + `_sum` + `_count`, optionally by labels;
 * - collected: a value read at scrape time (a gauge, or a counter kept by its owner), with optional labels.
 */

export type Labels = Record<string, string>
type MetricType = 'counter' | 'gauge' | 'histogram'

/** A value read at scrape time: a number, or one number per label set. */
export type Reading = number | { labels: Labels; value: number }[]

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** Label values escaped as the format requires (backslash, double quote, newline). */
function escapeValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** HELP text escaped as the format requires (backslash, newline). */
function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

function labelText(labels: Labels | undefined, extra?: [string, string]): string {
  const pairs = Object.entries(labels ?? {})
  if (extra) pairs.push(extra)
  if (pairs.length === 0) return ''
  for (const [name] of pairs) if (!LABEL_NAME.test(name)) throw new Error(`metrics: invalid label name ${name}`)
  return `{${pairs.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(',')}}`
}

/** Numbers as the format writes them (+Inf, -Inf, NaN). */
function num(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

export class Counter {
  private readonly values = new Map<string, { text: string; n: number }>()
  constructor(private readonly labelNames: readonly string[]) {}

  /** Adds `by` (default 1) to the series of these labels (their names as declared). */
  inc(labels?: Labels, by = 1): void {
    const key = this.labelNames.map((name) => labels?.[name] ?? '').join('\u0000')
    let series = this.values.get(key)
    if (!series) this.values.set(key, (series = { text: labelText(labels), n: 0 }))
    series.n += by
  }

  /** The current value of one series (tests, summaries). */
  get(labels?: Labels): number {
    return this.values.get(this.labelNames.map((name) => labels?.[name] ?? '').join('\u0000'))?.n ?? 0
  }

  lines(name: string): string[] {
    return [...this.values.values()].map(({ text, n }) => `${name}${text} ${num(n)}`)
  }
}

export class Histogram {
  private readonly series = new Map<string, { labels: Labels | undefined; counts: number[]; sum: number; count: number }>()
  constructor(
    private readonly buckets: readonly number[],
    private readonly labelNames: readonly string[],
  ) {}

  observe(value: number, labels?: Labels): void {
    const key = this.labelNames.map((name) => labels?.[name] ?? '').join('\u0000')
    let s = this.series.get(key)
    if (!s) this.series.set(key, (s = { labels, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 }))
    let bucket = 0
    while (bucket < this.buckets.length && value > this.buckets[bucket]!) bucket++
    if (bucket < this.buckets.length) s.counts[bucket]!++
    s.sum += value
    s.count++
  }

  lines(name: string): string[] {
    const out: string[] = []
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0
      this.buckets.forEach((b, i) => {
        cumulative += counts[i]!
        out.push(`${name}_bucket${labelText(labels, ['le', num(b)])} ${cumulative}`)
      })
      out.push(`${name}_bucket${labelText(labels, ['le', '+Inf'])} ${count}`)
      out.push(`${name}_sum${labelText(labels)} ${num(sum)}`, `${name}_count${labelText(labels)} ${count}`)
    }
    return out
  }
}

interface Family {
  name: string
  help: string
  type: MetricType
  lines(): Promise<string[]>
}

export class MetricsRegistry {
  private readonly families = new Map<string, Family>()

  private add(family: Family): void {
    if (!NAME.test(family.name)) throw new Error(`metrics: invalid name ${family.name}`)
    if (this.families.has(family.name)) throw new Error(`metrics: ${family.name} is registered twice`)
    this.families.set(family.name, family)
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    const counter = new Counter(labelNames)
    this.add({ name, help, type: 'counter', lines: async () => counter.lines(name) })
    return counter
  }

  histogram(name: string, help: string, buckets: readonly number[], labelNames: readonly string[] = []): Histogram {
    const histogram = new Histogram(buckets, labelNames)
    this.add({ name, help, type: 'histogram', lines: async () => histogram.lines(name) })
    return histogram
  }

  /** A series whose value is read at scrape time: a gauge, or a counter its owner keeps (`type: 'counter'`). */
  collect(name: string, help: string, read: () => Reading | Promise<Reading>, type: 'gauge' | 'counter' = 'gauge'): void {
    this.add({
      name, help, type,
      lines: async () => {
        const reading = await read()
        return typeof reading === 'number' ? [`${name} ${num(reading)}`] : reading.map(({ labels, value }) => `${name}${labelText(labels)} ${num(value)}`)
      },
    })
  }

  /** Every family: `# HELP`, `# TYPE`, then its samples. A family that fails to read is left out (logged by the caller). */
  async render(onError?: (name: string, err: unknown) => void): Promise<string> {
    const out: string[] = []
    for (const family of this.families.values()) {
      let lines: string[]
      try {
        lines = await family.lines()
      } catch (err) {
        onError?.(family.name, err)
        continue
      }
      out.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`, ...lines)
    }
    return out.join('\n') + '\n'
  }
}
