/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week), evaluated in UTC as Botpress's recurring
 * events are: `*`, numbers, ranges `a-b`, steps `*\/n` and `a-b/n`, lists `a,b`, month and day names (JAN, MON),
 * day-of-week 0-7 (0 and 7 are Sunday). When both day fields are restricted, a day matching either one matches
 * (the usual cron rule). No seconds field, no `?`, `L`, `W` or `#`.
 */

export interface Cron {
  minutes: Set<number>
  hours: Set<number>
  days: Set<number>
  months: Set<number>
  weekdays: Set<number>
  /** Whether the day-of-month / day-of-week field was `*` (the either-day rule applies only when both are restricted). */
  anyDay: boolean
  anyWeekday: boolean
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']

interface Field { name: string; min: number; max: number; names?: string[]; base?: number }

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: WEEKDAYS, base: 0 },
]

export class CronError extends Error {}

function parseField(text: string, field: Field): Set<number> {
  const values = new Set<number>()
  const value = (raw: string): number => {
    const upper = raw.toUpperCase()
    const named = field.names?.indexOf(upper) ?? -1
    if (named >= 0) return named + (field.base ?? 0)
    if (!/^\d{1,2}$/.test(raw)) throw new CronError(`${field.name} "${raw}" is not a number`)
    const n = Number(raw)
    if (n < field.min || n > field.max) throw new CronError(`${field.name} ${n} is outside ${field.min}-${field.max}`)
    return n
  }
  for (const part of text.split(',')) {
    const [range, stepText, extra] = part.split('/')
    if (extra !== undefined || range === undefined || range === '') throw new CronError(`${field.name} "${part}" is malformed`)
    let step = 1
    if (stepText !== undefined) {
      if (!/^\d{1,2}$/.test(stepText) || Number(stepText) === 0) throw new CronError(`${field.name} step "${stepText}" must be a positive number`)
      step = Number(stepText)
    }
    let from: number
    let to: number
    if (range === '*') {
      from = field.min
      to = field.max
    } else {
      const bounds = range.split('-')
      if (bounds.length > 2) throw new CronError(`${field.name} "${range}" is malformed`)
      from = value(bounds[0]!)
      to = bounds.length === 2 ? value(bounds[1]!) : stepText !== undefined ? field.max : from
      if (to < from) throw new CronError(`${field.name} range "${range}" is backwards`)
    }
    for (let n = from; n <= to; n += step) values.add(n)
  }
  return values
}

/** Parses an expression; throws CronError saying what is wrong. */
export function parseCron(expression: string): Cron {
  const parts = expression.trim().split(/\s+/)
  if (parts.length !== 5) throw new CronError(`a cron expression has 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`)
  const [minutes, hours, days, months, weekdays] = parts.map((p, i) => parseField(p, FIELDS[i]!)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>]
  if (weekdays.has(7)) weekdays.add(0)
  return { minutes, hours, days, months, weekdays, anyDay: parts[2] === '*', anyWeekday: parts[4] === '*' }
}

function dayMatches(cron: Cron, d: Date): boolean {
  const dom = cron.days.has(d.getUTCDate())
  const dow = cron.weekdays.has(d.getUTCDay())
  if (cron.anyDay || cron.anyWeekday) return dom && dow
  return dom || dow
}

export function cronMatches(cron: Cron, at: number): boolean {
  const d = new Date(at)
  return cron.months.has(d.getUTCMonth() + 1) && dayMatches(cron, d) && cron.hours.has(d.getUTCHours()) && cron.minutes.has(d.getUTCMinutes())
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** Occurrences are searched at most this far (a Feb 29 schedule may wait 4 years: 8 years is every valid one). */
const HORIZON = 8 * 366 * 24 * HOUR

/** The first occurrence strictly after `after` (ms), or undefined when none comes within 8 years (e.g. `0 0 31 2 *`). */
export function nextOccurrence(cron: Cron, after: number): number | undefined {
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE
  const end = after + HORIZON
  while (t <= end) {
    const d = new Date(t)
    if (!cron.months.has(d.getUTCMonth() + 1)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
    } else if (!dayMatches(cron, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
    } else if (!cron.hours.has(d.getUTCHours())) {
      t = Math.floor(t / HOUR) * HOUR + HOUR
    } else if (!cron.minutes.has(d.getUTCMinutes())) {
      t += MINUTE
    } else {
      return t
    }
  }
  return undefined
}

/** The latest occurrence at or before `at` (ms), or undefined when none was within 8 years. */
export function previousOccurrence(cron: Cron, at: number): number | undefined {
  let t = Math.floor(at / MINUTE) * MINUTE
  const end = at - HORIZON
  while (t >= end) {
    const d = new Date(t)
    if (!cron.months.has(d.getUTCMonth() + 1)) {
      // The last minute of the previous month.
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - MINUTE
    } else if (!dayMatches(cron, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - MINUTE
    } else if (!cron.hours.has(d.getUTCHours())) {
      t = Math.floor(t / HOUR) * HOUR - MINUTE
    } else if (!cron.minutes.has(d.getUTCMinutes())) {
      t -= MINUTE
    } else {
      return t
    }
  }
  return undefined
}
