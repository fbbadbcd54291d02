import { describe, expect, it } from 'vitest'
import { MemoryPubSub } from '../../src/pubsub/memory.js'
import { describePubSubContract } from './pubsub.contract.js'

describePubSubContract('memory', async () => {
  const pubsub = new MemoryPubSub()
  return { pubsub, cleanup: () => pubsub.close() }
})

describe('MemoryPubSub specifics', () => {
  it('counts live subscriptions and forgets them on unsubscribe and close', async () => {
    const pubsub = new MemoryPubSub()
    const offs = await Promise.all([
      pubsub.subscribe('a', () => {}),
      pubsub.subscribe('a', () => {}),
      pubsub.subscribe('b', () => {}),
    ])
    expect(pubsub.subscriptionCount()).toBe(3)
    await offs[0]!()
    await offs[0]!()
    expect(pubsub.subscriptionCount()).toBe(2)
    await offs[2]!()
    expect(pubsub.subscriptionCount()).toBe(1)
    await pubsub.close()
    expect(pubsub.subscriptionCount()).toBe(0)
  })

  it('delivers synchronously within publish', async () => {
    const pubsub = new MemoryPubSub()
    const got: string[] = []
    await pubsub.subscribe('c', (m) => got.push(m))
    const pending = pubsub.publish('c', 'now')
    expect(got).toEqual(['now'])
    await pending
    await pubsub.close()
  })

  it('a subscriber added during delivery does not receive the message being delivered', async () => {
    const pubsub = new MemoryPubSub()
    const late: string[] = []
    await pubsub.subscribe('d', () => {
      void pubsub.subscribe('d', (m) => late.push(m))
    })
    await pubsub.publish('d', 'first')
    expect(late).toEqual([])
    await pubsub.publish('d', 'second')
    expect(late).toEqual(['second'])
    await pubsub.close()
  })

  it('publish waits for a subscriber that answers a promise, and never longer than its cap for one that never settles', async () => {
    const pubsub = new MemoryPubSub({ deliveryWaitMs: 20 })
    const done: string[] = []
    await pubsub.subscribe('w', (m) => new Promise<void>((resolve) => setImmediate(() => {
      done.push(m)
      resolve()
    })))
    await pubsub.publish('w', 'one')
    expect(done).toEqual(['one'])
    // A stuck subscriber (a stream whose client never reads): the publish still resolves, and the others got it.
    const other: string[] = []
    await pubsub.subscribe('s', () => new Promise<void>(() => {}))
    await pubsub.subscribe('s', (m) => other.push(m))
    await pubsub.publish('s', 'two')
    expect(other).toEqual(['two'])
    // A rejecting subscriber does not fail the publish.
    await pubsub.subscribe('r', () => Promise.reject(new Error('boom')))
    await pubsub.publish('r', 'three')
    await pubsub.close()
  })
})
