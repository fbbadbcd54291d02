/**
 * One byte range of a `Range` request header (RFC 9110 §14), for files served whole from memory: `bytes=a-b`,
 * `bytes=a-` or `bytes=-n` (the last n bytes), clamped to the file. Anything else — another unit, several ranges,
 * a malformed or unsatisfiable range — gives undefined, and the caller serves the whole file with 200, which the
 * RFC allows ("a server MAY ignore the Range header field"). Browsers ask `bytes=0-` for media and then seek.
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (header === undefined || size === 0) return undefined
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim())
  if (!match) return undefined
  const [, first = '', last = ''] = match
  if (first === '' && last === '') return undefined
  if (first === '') {
    const suffix = Number(last)
    return suffix === 0 ? undefined : { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  return start >= size || end < start ? undefined : { start, end }
}
