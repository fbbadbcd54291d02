/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests of GET /metrics. It throws
 * on anything a scraper would reject or a reader would find wrong: a sample whose family has no `# HELP`
 * and `# TYPE` before it, a family declared twice or split in two, a bad metric or label name, a bad
 * escape, a value that is not a number, histogram buckets that decrease or whose `+Inf` bucket is not
 * the `_count`, a missing final newline.
 */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Family {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'
  samples: Sample[]
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity
  if (text === '-Inf') return -Infinity
  if (text === 'NaN') return NaN
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a number: ${JSON.stringify(text)} in ${JSON.stringify(line)}`)
  return Number(text)
}

/** `{a="1",b="x\"y"}` → labels and the rest of the line after the closing brace. */
function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {}
  let i = 1
  for (;;) {
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) }
    const eq = text.indexOf('=', i)
    if (eq < 0) throw new Error(`bad labels in ${JSON.stringify(line)}`)
    const name = text.slice(i, eq)
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} in ${JSON.stringify(line)}`)
    if (name in labels) throw new Error(`label ${name} twice in ${JSON.stringify(line)}`)
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in ${JSON.stringify(line)}`)
    let value = ''
    let j = eq + 2
    for (;; j++) {
      const c = text[j]
      if (c === undefined) throw new Error(`unterminated label value in ${JSON.stringify(line)}`)
      if (c === '"') break
      if (c === '\\') {
        const next = text[++j]
        if (next === '\\') value += '\\'
        else if (next === '"') value += '"'
        else if (next === 'n') value += '\n'
        else throw new Error(`bad escape \\${next} in ${JSON.stringify(line)}`)
      } else value += c
    }
    labels[name] = value
    i = j + 1
    if (text[i] === ',') i++
    else if (text[i] !== '}') throw new Error(`expected , or } in ${JSON.stringify(line)}`)
  }
}

/** The family a sample belongs to: histogram samples carry _bucket/_sum/_count. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name)
  if (direct) return direct
  const m = /^(.*)_(bucket|sum|count)$/.exec(name)
  const base = m && families.get(m[1]!)
  return base && (base.type === 'histogram' || base.type === 'summary') ? base : undefined
}

export function parsePrometheus(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline')
  const families = new Map<string, Family>()
  const pendingHelp = new Map<string, string>()
  const closed = new Set<string>()
  let current: Family | undefined
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line)
      if (!m) continue // a plain comment
      const [, kind, name, rest] = m as unknown as [string, 'HELP' | 'TYPE', string, string]
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name ${JSON.stringify(name)}`)
      if (kind === 'HELP') {
        if (pendingHelp.has(name) || families.has(name)) throw new Error(`# HELP ${name} twice`)
        if (rest.trim() === '') throw new Error(`# HELP ${name} is empty`)
        pendingHelp.set(name, rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\'))
      } else {
        if (families.has(name)) throw new Error(`# TYPE ${name} twice`)
        if (!TYPES.has(rest)) throw new Error(`# TYPE ${name} has an unknown type ${JSON.stringify(rest)}`)
        const help = pendingHelp.get(name)
        if (help === undefined) throw new Error(`# TYPE ${name} without a # HELP before it`)
        if (current) closed.add(current.name)
        current = { name, help, type: rest as Family['type'], samples: [] }
        families.set(name, current)
      }
      continue
    }
    const nameEnd = line.search(/[{ ]/)
    if (nameEnd <= 0) throw new Error(`bad sample line ${JSON.stringify(line)}`)
    const name = line.slice(0, nameEnd)
    if (!METRIC_NAME.test(name)) throw new Error(`bad metric name ${JSON.stringify(name)}`)
    const { labels, rest } = line[nameEnd] === '{' ? parseLabels(line.slice(nameEnd), line) : { labels: {}, rest: line.slice(nameEnd) }
    const parts = rest.trim().split(/ +/)
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`bad sample line ${JSON.stringify(line)}`)
    const value = parseValue(parts[0]!, line)
    const family = familyOf(name, families)
    if (!family) throw new Error(`sample ${name} has no # HELP and # TYPE before it`)
    if (family !== current || closed.has(family.name)) throw new Error(`samples of ${family.name} are not together under its # TYPE`)
    family.samples.push({ name, labels, value })
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family)
  return families
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>()
  for (const s of family.samples) {
    const { le, ...rest } = s.labels
    const key = JSON.stringify(Object.entries(rest).sort())
    let g = groups.get(key)
    if (!g) groups.set(key, (g = { buckets: [] }))
    if (s.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${s.name} without le`)
      g.buckets.push([parseValue(le, s.name), s.value])
    } else if (s.name === `${family.name}_count`) g.count = s.value
    else if (s.name === `${family.name}_sum`) g.sum = s.value
    else throw new Error(`${s.name} in histogram ${family.name}`)
  }
  for (const [key, g] of groups) {
    if (g.count === undefined || g.sum === undefined) throw new Error(`histogram ${family.name}${key}: no _count or _sum`)
    for (let i = 1; i < g.buckets.length; i++) {
      if (g.buckets[i]![0] <= g.buckets[i - 1]![0]) throw new Error(`histogram ${family.name}${key}: le not increasing`)
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) throw new Error(`histogram ${family.name}${key}: bucket counts decrease`)
    }
    const last = g.buckets.at(-1)
    if (!last || last[0] !== Infinity || last[1] !== g.count) throw new Error(`histogram ${family.name}${key}: the +Inf bucket is not the _count`)
  }
}

/** The value of the sample `name` whose labels include `labels` (undefined when there is none). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value
    }
  }
  return undefined
}
