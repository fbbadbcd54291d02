/**
 * The sandboxed echo bot: answers a text message with its text. The bot of the turn benchmarks (bench/turns.ts,
 * turns-client, remote-bot) and of the per-turn store-call count (test/runtime/turn-store-calls.test.ts), so the
 * count guards the very turn the benchmarks time.
 */
export const ECHO_BOT = String.raw`
export const hooks = {
  async afterIncoming({ event, client }) {
    if (event.type === 'text') await client.createMessage({ payload: { type: 'text', text: event.payload.text } })
  },
}
`
