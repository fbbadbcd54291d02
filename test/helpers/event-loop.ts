/**
 * Counting, not timing, that work yields: the turns the event loop gets (a setImmediate probe) while `work` runs.
 * Work that holds the loop in one synchronous stretch lets it turn at most once. Never imports vitest.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0
  let running = true
  const tick = () => { if (running) { turns++; setImmediate(tick) } }
  setImmediate(tick)
  try {
    return { result: await work(), turns }
  } finally { running = false }
}
