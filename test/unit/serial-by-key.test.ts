import { describe, expect, it } from 'vitest'
import { SerialByKey } from '../../src/runtime/serial-by-key.js'

/** A run that waits until released, recording how many runs of its key overlap. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

describe('SerialByKey (the bot runtime\'s turns and the integrations\' deliveries)', () => {
  it('runs one key one run at a time; schedules during a run make exactly one more run', async () => {
    const work = new SerialByKey(() => false)
    let running = 0
    let most = 0
    let runs = 0
    const first = gate()
    const job = async () => {
      runs++
      running++
      most = Math.max(most, running)
      if (runs === 1) await first.opened
      running--
    }
    work.schedule('a', job)
    work.schedule('a', job)
    work.schedule('a', job)
    expect(work.size).toBe(1)
    first.open()
    await work.idle('a')
    expect(runs).toBe(2)
    expect(most).toBe(1)
    expect(work.size).toBe(0)
  })

  it('runs different keys side by side', async () => {
    const work = new SerialByKey(() => false)
    const g = gate()
    const seen: string[] = []
    work.schedule('a', async () => { seen.push('a'); await g.opened })
    work.schedule('b', async () => { seen.push('b'); await g.opened })
    expect(work.size).toBe(2)
    expect(seen).toEqual(['a', 'b'])
    g.open()
    await work.allIdle()
    expect(work.size).toBe(0)
  })

  it('again() asks for one more run after the current one; a failed run ends quietly and the key can run again', async () => {
    const work = new SerialByKey(() => false)
    let runs = 0
    work.schedule('a', async () => {
      runs++
      if (runs === 1) work.again('a')
      else throw new Error('the database went away')
    })
    await work.idle('a')
    expect(runs).toBe(2)
    work.schedule('a', async () => { runs++ })
    await work.idle('a')
    expect(runs).toBe(3)
  })

  it('once stopped, starts nothing and does not repeat a run asked for again', async () => {
    let stopped = false
    const work = new SerialByKey(() => stopped)
    const g = gate()
    let runs = 0
    work.schedule('a', async () => { runs++; await g.opened })
    work.schedule('a', async () => { runs++ })
    stopped = true
    work.schedule('b', async () => { runs++ })
    g.open()
    await work.allIdle()
    expect(runs).toBe(1)
  })
})
