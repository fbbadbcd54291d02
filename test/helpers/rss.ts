/**
 * Resident memory of a process from /proc (Linux): VmRSS (now) and VmHWM (the kernel's high-water mark, which
 * counts every thread of the process, worker threads included, and misses no short peak a sampler would).
 */
import { readFileSync, writeFileSync } from 'node:fs'

export const MB = 1024 * 1024

export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  return statusKb(pid, field) * 1024
}

/** A memory field of /proc/<pid>/status, in kB. */
export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(match![1])
}

/** Peak resident memory of `pid` while `work` runs: the kernel's high-water mark, reset first, and the RSS it started from. */
export async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; baseline: number; peak: number }> {
  writeFileSync(`/proc/${pid}/clear_refs`, '5') // resets VmHWM to the current RSS
  const baseline = statusBytes(pid, 'VmRSS')
  let sampled = baseline
  const sampler = setInterval(() => { sampled = Math.max(sampled, statusBytes(pid, 'VmRSS')) }, 20)
  try {
    const result = await work()
    return { result, baseline, peak: Math.max(sampled, statusBytes(pid, 'VmHWM')) }
  } finally {
    clearInterval(sampler)
  }
}
