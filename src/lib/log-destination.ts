import pino from 'pino'

type Destination = pino.DestinationStream & { flush: (cb?: (err?: Error) => void) => void; atExit: () => void }

/** The destinations made in this process, for the exit below (weakly: an app that is gone takes its own along). */
const made = new Set<WeakRef<{ atExit: () => void }>>()
process.once('exit', () => {
  for (const ref of made) ref.deref()?.atExit()
})

/**
 * Where the instance's log lines go: standard output, through pino's asynchronous destination (which writes in the
 * background). The lines of one turn of the event loop are handed to it together, as one string, at the end of that
 * turn. Line by line, that destination appends each to one growing string and measures the whole string's byte length
 * again every time, so a line cost more the more lines waited behind a write in progress (bench/ANALYSIS.md §10). A
 * line waits no longer than its turn, and what waits when the process exits is written before it ends.
 */
export function logDestination(fd = 1): Destination {
  const out = pino.destination({ dest: fd, sync: false })
  let lines: string[] = []
  let scheduled = false
  const handOver = () => {
    scheduled = false
    if (lines.length === 0) return
    const text = lines.length === 1 ? lines[0]! : lines.join('')
    lines = []
    out.write(text)
  }
  const destination = {
    write(line: string) {
      lines.push(line)
      if (!scheduled) {
        scheduled = true
        setImmediate(handOver)
      }
    },
    flush(cb?: (err?: Error) => void) {
      handOver()
      out.flush(cb)
    },
    atExit() {
      if (lines.length === 0) return
      handOver()
      try {
        out.flushSync()
      } catch {
        // Standard output is gone (a closed pipe): nothing more can be written.
      }
    },
  }
  for (const ref of made) if (!ref.deref()) made.delete(ref)
  made.add(new WeakRef(destination))
  return destination
}
