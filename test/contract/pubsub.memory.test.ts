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
})
