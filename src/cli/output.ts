/** Terminal output: colors only on a TTY without NO_COLOR; results on stdout, progress and errors on stderr. */

const enabled = (stream: NodeJS.WriteStream) => Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb'

const wrap = (open: number, close: number) => (stream: NodeJS.WriteStream) => (text: string) =>
  enabled(stream) ? `\u001b[${open}m${text}\u001b[${close}m` : text

export const style = {
  bold: wrap(1, 22),
  dim: wrap(2, 22),
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  cyan: wrap(36, 39),
}

export const out = (text = '') => process.stdout.write(text + '\n')
export const err = (text = '') => process.stderr.write(text + '\n')

/** Progress on stderr (so stdout stays parseable). */
export const progress = (text: string) => err(style.dim(process.stderr)(text))
export const success = (text: string) => err(style.green(process.stderr)(`✓ ${text}`))

export function json(value: unknown): void {
  out(JSON.stringify(value, null, 2))
}

/** A plain text table: columns padded to their widest cell. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
}

export function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1024 / 1024).toFixed(2)} MB`
}
