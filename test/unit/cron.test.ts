/**
 * The 5-field cron matcher of recurring events (src/lib/cron.ts): occurrences computed by the jumping search agree
 * with a minute-by-minute scan, the either-day rule, names and steps, and bad expressions are refused with a reason.
 */
import { describe, expect, it } from 'vitest'
import { CronError, cronMatches, nextOccurrence, parseCron, previousOccurrence } from '../../src/lib/cron.js'

const at = (iso: string) => Date.parse(iso)
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())

describe('cron', () => {
  it("bugbuster's schedules: Mondays at 13:00 UTC and every hour on the hour", () => {
    const weekly = parseCron('0 13 * * 1')
    expect(iso(nextOccurrence(weekly, at('2025-01-01T00:00:00Z')))).toBe('2025-01-06T13:00:00.000Z')
    expect(iso(nextOccurrence(weekly, at('2025-01-06T13:00:00Z')))).toBe('2025-01-13T13:00:00.000Z')
    expect(iso(previousOccurrence(weekly, at('2025-01-06T13:00:00Z')))).toBe('2025-01-06T13:00:00.000Z')
    expect(iso(previousOccurrence(weekly, at('2025-01-06T12:59:59Z')))).toBe('2024-12-30T13:00:00.000Z')
    const hourly = parseCron('0 * * * *')
    expect(iso(nextOccurrence(hourly, at('2025-03-09T23:30:00Z')))).toBe('2025-03-10T00:00:00.000Z')
    expect(iso(previousOccurrence(hourly, at('2025-03-10T00:00:59Z')))).toBe('2025-03-10T00:00:00.000Z')
  })

  it('steps, ranges, lists, names and Sunday as 0 or 7', () => {
    expect(iso(nextOccurrence(parseCron('*/15 9-17 * * MON-FRI'), at('2025-01-03T17:50:00Z')))).toBe('2025-01-06T09:00:00.000Z')
    expect(iso(nextOccurrence(parseCron('5,35 */6 * JAN,jul *'), at('2025-01-31T18:40:00Z')))).toBe('2025-07-01T00:05:00.000Z')
    expect(iso(nextOccurrence(parseCron('0 0 * * 7'), at('2025-01-01T00:00:00Z')))).toBe('2025-01-05T00:00:00.000Z')
    expect(iso(nextOccurrence(parseCron('0 0 * * 0'), at('2025-01-01T00:00:00Z')))).toBe('2025-01-05T00:00:00.000Z')
    expect(iso(nextOccurrence(parseCron('10-20/5 0 1 * *'), at('2025-01-01T00:12:00Z')))).toBe('2025-01-01T00:15:00.000Z')
    // 5/20 is 5, 25, 45.
    expect(iso(nextOccurrence(parseCron('5/20 0 1 * *'), at('2025-01-01T00:26:00Z')))).toBe('2025-01-01T00:45:00.000Z')
  })

  it('both day fields restricted: either one matches', () => {
    const cron = parseCron('0 0 13 * 5')
    // 2025-06-06 is a Friday, 2025-06-13 a Friday the 13th, 2025-07-13 a Sunday.
    expect(iso(nextOccurrence(cron, at('2025-06-01T00:00:00Z')))).toBe('2025-06-06T00:00:00.000Z')
    expect(cronMatches(cron, at('2025-07-13T00:00:00Z'))).toBe(true)
    expect(cronMatches(parseCron('0 0 13 * *'), at('2025-06-06T00:00:00Z'))).toBe(false)
  })

  it('Feb 29 waits for a leap year; a date that never comes has no occurrence', () => {
    expect(iso(nextOccurrence(parseCron('0 12 29 2 *'), at('2025-03-01T00:00:00Z')))).toBe('2028-02-29T12:00:00.000Z')
    expect(nextOccurrence(parseCron('0 0 31 2 *'), at('2025-01-01T00:00:00Z'))).toBeUndefined()
    expect(previousOccurrence(parseCron('0 0 30 2 *'), at('2025-01-01T00:00:00Z'))).toBeUndefined()
  })

  it('the jumping search agrees with a minute-by-minute scan', () => {
    const expressions = ['*/7 * * * *', '3 */5 * * *', '0 0 1,15 * *', '30 22 * * 6', '0 6 28-31 * *', '*/20 1 * 2 1-3', '59 23 31 12 *']
    const start = at('2024-02-20T21:13:00Z')
    for (const expression of expressions) {
      const cron = parseCron(expression)
      let scan = start + 60_000
      while (!cronMatches(cron, scan) && scan < start + 400 * 86_400_000) scan += 60_000
      expect(iso(nextOccurrence(cron, start)), expression).toBe(iso(scan))
      let back = start
      while (!cronMatches(cron, back) && back > start - 400 * 86_400_000) back -= 60_000
      expect(iso(previousOccurrence(cron, start + 30_000)), expression).toBe(iso(back))
    }
  })

  it('refuses malformed expressions with the reason', () => {
    for (const [expression, reason] of [
      ['* * * *', /5 fields/], ['60 * * * *', /minute 60 is outside 0-59/], ['* 24 * * *', /hour 24/], ['* * 0 * *', /day of month 0/],
      ['* * * 13 *', /month 13/], ['* * * * 8', /day of week 8/], ['*/0 * * * *', /step/], ['5-1 * * * *', /backwards/],
      ['a * * * *', /not a number/], ['1,,2 * * * *', /malformed/], ['1/2/3 * * * *', /malformed/], ['* * * FOO *', /not a number/],
    ] as const) {
      expect(() => parseCron(expression), expression).toThrow(CronError)
      expect(() => parseCron(expression), expression).toThrow(reason)
    }
  })
})
