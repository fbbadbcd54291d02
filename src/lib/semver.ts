/**
 * Semantic versions as the Botpress CLI asks for them by name (getIntegrationByName, getPublicInterface…):
 * an exact version (`1.2.3`), `latest` or `*`, or comparators joined by spaces (`<1.2.3`, `>=1.0.0 <2.0.0`;
 * the CLI's findPreviousIntegrationVersion sends `<version`). The highest matching version wins.
 */
const VERSION = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]{1,100}))?(?:\+[0-9A-Za-z.-]{1,100})?$/
const COMPARATOR = /^(<=|>=|<|>|=)?v?(.+)$/

export const isVersion = (v: string): boolean => VERSION.test(v)

/** Negative, zero or positive like a sort comparator; a prerelease sorts before its release. */
export function compareVersions(a: string, b: string): number {
  const pa = VERSION.exec(a)
  const pb = VERSION.exec(b)
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i])
    if (d !== 0) return d
  }
  if (pa[4] === pb[4]) return 0
  if (pa[4] === undefined) return 1
  if (pb[4] === undefined) return -1
  return pa[4] < pb[4] ? -1 : 1
}

/** The test of a version range, or undefined when `range` is not one. */
export function parseRange(range: string): ((version: string) => boolean) | undefined {
  const text = range.trim()
  if (text === 'latest' || text === '*' || text === '') return () => true
  const tests: ((v: string) => boolean)[] = []
  for (const part of text.split(/\s+/).slice(0, 10)) {
    const m = COMPARATOR.exec(part)
    if (!m || !VERSION.test(m[2]!)) return undefined
    const [op = '=', target] = [m[1], m[2]!]
    tests.push((v) => {
      const c = compareVersions(v, target)
      return op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : op === '>=' ? c >= 0 : c === 0
    })
  }
  return (v) => tests.every((t) => t(v))
}

/** The item of the highest version in `range` (undefined when none, or when `range` is not a range). */
export function highestMatching<T extends { version: string }>(items: T[], range: string): T | undefined {
  const test = parseRange(range)
  if (!test) return undefined
  let best: T | undefined
  for (const item of items) if (test(item.version) && (!best || compareVersions(item.version, best.version) > 0)) best = item
  return best
}
