import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * The thread's code (CommonJS, evaluated): its own connection to the database, a PASSIVE checkpoint every interval
 * (it copies what it can and never waits for the serving connection's readers or writer), closed on any message.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
let db
try {
  db = new Database(workerData.file, { fileMustExist: true })
  db.pragma('busy_timeout = 0')
} catch (err) {
  // Sent as text: an error of the driver's own class does not cross threads whole.
  parentPort.postMessage({ error: String(err && err.message) })
  throw err
}
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch (err) {
    // Another checkpoint is running (the serving connection's own, past its bound): the next interval tries again.
    if (err.code !== 'SQLITE_BUSY' && err.code !== 'SQLITE_LOCKED') parentPort.postMessage({ error: String(err.message) })
  }
}, workerData.intervalMs)
parentPort.once('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

export interface Checkpointer {
  /** Stops the thread and closes its connection (before the serving connection closes: the last one checkpoints). */
  close(): Promise<void>
}

/**
 * Checkpoints a WAL database from a thread of its own, so that copying the WAL's pages into the database file, and
 * the fsync that follows, never hold the event loop: with SQLite's own checkpoints the serving connection did it
 * inside a commit every 1,000 pages (~9 µs of waiting per message at full load; bench/ANALYSIS.md §10).
 * `onError`: the thread failed (it could not open the file, a checkpoint failed); it has stopped.
 */
export function startCheckpointer(file: string, options: { intervalMs: number; onError: (err: Error) => void }): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(THREAD, { eval: true, workerData: { driver, file, intervalMs: options.intervalMs } })
  worker.unref()
  let failed = false
  const fail = (err: Error) => {
    if (failed) return
    failed = true
    options.onError(err)
    void worker.terminate()
  }
  worker.on('message', (m: { error?: string }) => fail(new Error(`SQLite checkpoint thread: ${m.error ?? 'failed'}`)))
  worker.on('error', (err: unknown) => fail(err instanceof Error && err.message ? err : new Error(`SQLite checkpoint thread: ${String(err)}`)))
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  return {
    close: async () => {
      if (!failed) worker.postMessage('close')
      await exited
    },
  }
}
