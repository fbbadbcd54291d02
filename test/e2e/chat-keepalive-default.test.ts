import { it, expect } from 'vitest'
import * as chat from '@botpress/chat'
import { startParley } from '../helpers/harness.js'
it('the official listener survives 8 s without messages under the default keep-alive (the Node client drops a stream silent for ~4 s)', async () => {
  const h = await startParley({ listen: true })
  try {
    const c = await chat.Client.connect({ apiUrl: h.credentials.chat.url })
    const { conversation } = await c.createConversation({})
    const l = await c.listenConversation({ id: conversation.id })
    let err: unknown
    l.on('error', (e) => { err = e })
    await new Promise((r) => setTimeout(r, 8000))
    expect(err).toBeUndefined()
    await l.disconnect()
  } finally { await h.close() }
})
