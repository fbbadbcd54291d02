/**
 * What a child process uses, read from Linux's /proc: CPU time so far and resident memory. Elsewhere (no /proc)
 * nothing is known and hosted code runs without the CPU and memory watch (the V8 heap limit still holds).
 */
import { readFileSync } from 'node:fs'

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s on every architecture Node runs on. */
const TICKS_PER_SECOND = 100

export interface ProcessUsage {
  /** CPU time (user + system) since the process started, in ms. */
  cpuMs: number
  /** Resident memory, in bytes. */
  rssBytes: number
}

export function processUsage(pid: number): ProcessUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: the fields after it follow its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // Fields 14 and 15 (utime, stime) are at 11 and 12 once fields 1 and 2 are cut.
    const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status)
    if (!Number.isFinite(cpuMs) || !rss) return undefined
    return { cpuMs, rssBytes: Number(rss[1]) * 1024 }
  } catch {
    return undefined
  }
}

/**
 * CPU use over a sliding window: `add` a reading (the process's CPU time so far, at a time); `share` is the part
 * of one core it used between the oldest reading still in the window and the newest, once the window is full.
 */
export class CpuWindow {
  private readonly readings: Array<{ at: number; cpuMs: number }> = []

  constructor(private readonly windowMs: number) {}

  add(at: number, cpuMs: number): void {
    this.readings.push({ at, cpuMs })
    while (this.readings.length > 2 && this.readings[1]!.at <= at - this.windowMs) this.readings.shift()
  }

  /** The share of one core used over the window (1 = a whole core), undefined until the window is covered. */
  share(): { share: number; cpuMs: number; spanMs: number } | undefined {
    const first = this.readings[0]
    const last = this.readings[this.readings.length - 1]
    if (!first || !last || last.at - first.at < this.windowMs) return undefined
    const cpuMs = last.cpuMs - first.cpuMs
    const spanMs = last.at - first.at
    return { share: cpuMs / spanMs, cpuMs, spanMs }
  }
}
