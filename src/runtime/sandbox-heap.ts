/**
 * The memory of bot code: every sandbox worker's WebAssembly heap, and what the pool's workers hold together.
 *
 * QuickJS's own memory limit (setMemoryLimit) does not hold in this WebAssembly build: it counts allocations by
 * malloc_usable_size, which emscripten's build of QuickJS reports as 0, so the limit only counts 8 bytes per live
 * allocation (measured: one bot filling arrays, strings or typed arrays "within" its 128 MB grew its worker's heap
 * to the heap's cap, 768 MB, and the server's RSS with it). The limits are therefore kept here, where the heap
 * grows: QuickJS's allocator asks emscripten for more memory (WebAssembly.Memory.prototype.grow) and an allocation
 * that cannot get it fails as "out of memory", which QuickJS raises in the VM as it would at its own limit.
 *
 * - A run may grow its worker's heap by at most its bot's memory limit (`HeapAccount`).
 * - A worker's heap may not grow past `heapCapBytes`.
 * - All workers' heaps together (a counter of pages shared by the pool and its workers) may not grow past the
 *   pool's budget: however many workers are alive at once (the pool, the quarantine's, those being retired or
 *   replaced), bot code cannot make the server hold more than that in heaps.
 */
import type { SandboxLimits } from './sandbox.js'

const MB = 1024 * 1024
export const WASM_PAGE = 65536
/** The heap a worker starts with (QuickJS, the prelude and its first VMs fit in it). */
const INITIAL_PAGES = 256

/** The worker's and the pool's sizes, from a bot's memory limit and the pool's size (see heapSizes). */
export interface HeapSizes {
  /** The most a worker's heap may grow to. */
  heapCapBytes: number
  /** A worker whose heap has grown past this after a run asks to be retired (its memory given back). */
  recycleBytes: number
  /** The most all the pool's heaps may hold together. */
  poolBytes: number
}

/**
 * A worker holds the VMs it runs and keeps idle (up to ~70 MB of them): room for two bots at their limit besides.
 * The pool's budget, unless set (PARLEY_SANDBOX_HEAP_MB): one bot at its limit per ordinary worker, plus 32 MB
 * (the workers' heaps are 16 MB each when they start), and never under 256 MB (room for the heaps of the workers
 * a pool may start besides its own, held or being replaced): 288 MB with the defaults (2 workers, 128 MB per bot).
 */
export function heapSizes(limits: SandboxLimits, workers: number, poolBytes?: number): HeapSizes {
  const pool = poolBytes ?? Math.max(256 * MB, workers * limits.memoryBytes + 32 * MB)
  const heapCapBytes = Math.min(pool, 2048 * MB, Math.max(256 * MB, 2 * limits.memoryBytes + 128 * MB))
  return { heapCapBytes, recycleBytes: Math.min(heapCapBytes / 2, limits.memoryBytes + 64 * MB), poolBytes: pool }
}

/** The pages all of a pool's heaps hold, shared with its workers (they reserve what they grow by). */
export class PoolHeap {
  readonly shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)
  private readonly pages = new Int32Array(this.shared)

  /** A worker has exited: its heap (`bytes`, as it last reported it) is given back. */
  release(bytes: number): void {
    Atomics.sub(this.pages, 0, Math.round(bytes / WASM_PAGE))
  }

  get bytes(): number {
    return Atomics.load(this.pages, 0) * WASM_PAGE
  }
}

/** Why growing the heap was refused: the run's own limit, the worker's cap, or the pool's budget. */
export type HeapLimit = 'run' | 'worker' | 'pool'

/** What the code running now is charged with: the heap growth of its run, against its limit. */
export interface HeapAccount {
  grew: number
  limitBytes: number
  /** Set when growing was refused while this account was charged. */
  refused: HeapLimit | undefined
}

/**
 * A worker's heap: a WebAssembly memory whose grow (the only way QuickJS's allocator gets memory) checks the
 * three limits first. Its size is written to `size[at]` (the worker's heartbeat, which the pool reads to give the
 * heap back when the worker exits) right after each change, with no JS call in between the reservation in the
 * pool's counter and that write (a worker terminated there would leave its growth counted).
 */
export function workerHeap(options: Pick<HeapSizes, 'heapCapBytes' | 'poolBytes'> & { pool: SharedArrayBuffer }, size: Float64Array, at: number) {
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: Math.floor(options.heapCapBytes / WASM_PAGE) })
  const pool = new Int32Array(options.pool)
  const poolPages = Math.floor(options.poolBytes / WASM_PAGE)
  const grow = WebAssembly.Memory.prototype.grow
  // The heap a worker starts with is counted, never refused: a fresh worker must be able to start.
  Atomics.add(pool, 0, INITIAL_PAGES)
  size[at] = memory.buffer.byteLength
  const heap = {
    memory,
    /** Charged with what the heap grows by, while bot code runs (see HeapAccount). */
    account: undefined as HeapAccount | undefined,
    /** What all the pool's heaps hold together now, this one included. */
    poolBytes: () => Atomics.load(pool, 0) * WASM_PAGE,
  }
  const refuse = (limit: HeapLimit): never => {
    if (heap.account) heap.account.refused = limit
    throw new RangeError(`the sandbox heap may not grow past its ${limit} limit`)
  }
  // Emscripten grows the memory through this object's grow (it was handed in as wasmMemory): a refusal (it
  // throws, as a memory at its maximum does) makes the allocation fail, and QuickJS raises "out of memory".
  Object.defineProperty(memory, 'grow', {
    value(delta: number): number {
      const bytes = delta * WASM_PAGE
      const account = heap.account
      if (account && account.grew + bytes > account.limitBytes) refuse('run')
      if (memory.buffer.byteLength + bytes > options.heapCapBytes) refuse('worker')
      if (Atomics.add(pool, 0, delta) + delta > poolPages) {
        Atomics.sub(pool, 0, delta)
        refuse('pool')
      }
      let before: number
      try {
        before = grow.call(memory, delta)
      } catch (err) {
        Atomics.sub(pool, 0, delta)
        throw err
      }
      size[at] = memory.buffer.byteLength
      if (account) account.grew += bytes
      return before
    },
  })
  return heap
}
