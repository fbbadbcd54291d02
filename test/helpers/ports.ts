import { createServer } from 'node:net'

/**
 * A TCP port on 127.0.0.1 that nobody listens on right now (the OS picks it). Shared by the test
 * helpers and the benchmarks; it imports nothing from vitest so plain scripts can use it.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
