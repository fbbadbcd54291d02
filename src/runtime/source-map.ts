/**
 * Positions in bot errors mapped back to the bot's own files. QuickJS names a place in the deployed
 * module as `bot.js:LINE:COLUMN` (1-based) in error stacks; the prelude and the worker put that in the
 * failures they log. When the deployed code carries an inline source map (`parley deploy` bundles with
 * one: `//# sourceMappingURL=data:application/json;base64,…`), the position is rewritten to the
 * original file's, e.g. `my-bot.ts:12:11`. Without a map, `bot.js:LINE:COLUMN` stays: a line and column
 * of the deployed source itself. A small decoder of the source map v3 format, no dependency.
 */

export interface SourcePosition {
  source: string
  /** 1-based. */
  line: number
  /** 1-based. */
  column: number
}

/** One mapping segment: generated column (0-based), then source index, original line and column (0-based). */
type Segment = [number, number, number, number]

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]))
const INLINE_MAP = /\/\/[#@] sourceMappingURL=data:application\/json(?:;charset=[\w-]+)?;base64,([A-Za-z0-9+/=]+)\s*$/
/** Positions in the deployed module as QuickJS writes them. */
const DEPLOYED_POSITION = /\bbot\.js:(\d+):(\d+)/g

/** A segment's fields, decoded from base64 VLQ. */
function decodeSegment(text: string): number[] {
  const values: number[] = []
  let value = 0
  let shift = 0
  for (const c of text) {
    const digit = DIGIT.get(c)
    if (digit === undefined) throw new Error(`invalid base64 VLQ character ${JSON.stringify(c)}`)
    value += (digit & 31) * 2 ** shift
    if (digit & 32) {
      shift += 5
      continue
    }
    values.push(value & 1 ? -Math.floor(value / 2) : Math.floor(value / 2))
    value = 0
    shift = 0
  }
  return values
}

export class SourceMap {
  private constructor(
    private readonly sources: string[],
    /** By generated line (0-based): its segments sorted by generated column. */
    private readonly lines: Segment[][],
  ) {}

  /** The inline source map at the end of `code`, or undefined when it has none (or an unreadable one). */
  static fromCode(code: string): SourceMap | undefined {
    const at = code.lastIndexOf('//# sourceMappingURL=data:')
    const match = at < 0 ? null : INLINE_MAP.exec(code.slice(at))
    if (!match) return undefined
    try {
      return SourceMap.parse(JSON.parse(Buffer.from(match[1]!, 'base64').toString('utf8')) as unknown)
    } catch {
      return undefined
    }
  }

  static parse(raw: unknown): SourceMap | undefined {
    const map = raw as { version?: unknown; sources?: unknown; mappings?: unknown; sourceRoot?: unknown }
    if (map?.version !== 3 || !Array.isArray(map.sources) || typeof map.mappings !== 'string') return undefined
    const root = typeof map.sourceRoot === 'string' && map.sourceRoot !== '' ? map.sourceRoot.replace(/\/?$/, '/') : ''
    const sources = map.sources.map((s) => root + String(s))
    const lines: Segment[][] = []
    let source = 0
    let originalLine = 0
    let originalColumn = 0
    for (const lineText of map.mappings.split(';')) {
      const segments: Segment[] = []
      let column = 0
      for (const segmentText of lineText.split(',')) {
        if (segmentText === '') continue
        const fields = decodeSegment(segmentText)
        column += fields[0]!
        if (fields.length >= 4) {
          source += fields[1]!
          originalLine += fields[2]!
          originalColumn += fields[3]!
          segments.push([column, source, originalLine, originalColumn])
        }
      }
      segments.sort((a, b) => a[0] - b[0])
      lines.push(segments)
    }
    return new SourceMap(sources, lines)
  }

  /** The original position of a 1-based generated line and column, or undefined when it maps to nothing. */
  lookup(line: number, column: number): SourcePosition | undefined {
    const segments = this.lines[line - 1]
    if (!segments || segments.length === 0) return undefined
    // The last segment starting at or before the column (QuickJS points inside an expression).
    let low = 0
    let high = segments.length - 1
    let found = -1
    while (low <= high) {
      const mid = (low + high) >> 1
      if (segments[mid]![0] <= column - 1) {
        found = mid
        low = mid + 1
      } else high = mid - 1
    }
    const segment = segments[Math.max(found, 0)]!
    const source = this.sources[segment[1]]
    return source === undefined ? undefined : { source, line: segment[2] + 1, column: segment[3] + 1 }
  }
}

/** `text` with every `bot.js:LINE:COLUMN` replaced by the original file's position (unchanged where the map has none). */
export function mapDeployedPositions(text: string, map: SourceMap | undefined): string {
  if (!map || !text.includes('bot.js:')) return text
  return text.replace(DEPLOYED_POSITION, (whole, line: string, column: string) => {
    const original = map.lookup(Number(line), Number(column))
    return original ? `${original.source}:${original.line}:${original.column}` : whole
  })
}
