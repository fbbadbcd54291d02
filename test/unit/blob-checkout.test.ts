/**
 * The PostgreSQL blob store's client checkout (src/blobs/postgres.ts): a backend terminated mid-transfer makes its
 * connection emit an error more than once (the FATAL message, then the socket's end). The full suite once caught the
 * second one as an uncaught exception (test/contract/blobs.postgres.test.ts, its "instance dies mid-upload" case):
 * the transfer had released the client, with its error, and removed its listener. A fake pool client here emits them
 * in that order, deterministically.
 */
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import type pg from 'pg'
import { checkout } from '../../src/blobs/postgres.js'

class FakeClient extends EventEmitter {
  released: (Error | boolean | undefined)[] = []
  release(err?: Error | boolean): void {
    this.released.push(err)
  }
}

const poolOf = (client: FakeClient) => ({ connect: async () => client as unknown as pg.PoolClient }) as unknown as Pick<pg.Pool, 'connect'>

describe('blob store checkout', () => {
  it('a client lost mid-transfer: released broken, and a later error of its connection is not uncaught', async () => {
    const client = new FakeClient()
    const { release } = await checkout(poolOf(client))
    const fatal = new Error('terminating connection due to administrator command')
    client.emit('error', fatal)
    release()
    expect(client.released).toEqual([fatal])
    expect(() => client.emit('error', new Error('Connection terminated unexpectedly'))).not.toThrow()
  })

  it('a healthy client goes back to the pool without the transfer\'s listener (the pool listens on idle clients)', async () => {
    const client = new FakeClient()
    const { release } = await checkout(poolOf(client))
    expect(client.listenerCount('error')).toBe(1)
    release()
    expect(client.released).toEqual([undefined])
    expect(client.listenerCount('error')).toBe(0)
  })
})
