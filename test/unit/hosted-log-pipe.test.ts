/**
 * A hosted process's output as log lines (src/runtime/hosted/log-pipe.ts): lines past the window's cap are counted,
 * and the count is written even when the process prints nothing more (it went quiet, or exited).
 */
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { LogPipe, type LogLine } from '../../src/runtime/hosted/log-pipe.js'

describe('hosted code log pipe', () => {
  it('writes the first lines of a window and, once closed, how many it dropped', async () => {
    const written: LogLine[] = []
    const pipe = new LogPipe({ linesPerWindow: 2, windowMs: 60_000, clock: () => 1000, write: async (lines) => void written.push(...lines) })
    const out = new PassThrough()
    pipe.attach(out, 'info')
    out.end('one\ntwo\nthree\nfour\nfive\n')
    await new Promise((resolve) => out.on('end', resolve))
    await pipe.close()
    expect(written.map((l) => `${l.level} ${l.message}`)).toEqual([
      'info one', 'info two', 'error 3 log lines of the hosted process were dropped (more than 2 in 60 s)',
    ])
  })
})
