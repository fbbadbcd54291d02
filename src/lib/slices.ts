import { regexWork } from './linear-regex.js'

/**
 * Large writes (a Tables write near the body limit) are checked and written in slices of about this many bytes
 * of row JSON, with a turn of the event loop between slices: other requests are served meanwhile.
 */
export const WRITE_SLICE_BYTES = 1 << 20

/** The next turn of the event loop (timers and I/O of other requests run first). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Counts the bytes processed; `yieldIfDue` gives the event loop a turn once a slice's worth (or the turn's regex budget) is spent. */
export class Slices {
  private bytes = 0
  constructor(private readonly sliceBytes = WRITE_SLICE_BYTES) {}

  count(bytes: number): void { this.bytes += bytes }

  async yieldIfDue(): Promise<void> {
    if (this.bytes < this.sliceBytes && !regexWork.overBudget) return
    this.bytes = 0
    await nextTurn()
  }
}
