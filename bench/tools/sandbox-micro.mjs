// Cost of bot turns in the QuickJS sandbox (compiled build), one worker: creating a VM with the
// demo bot's code, and running the demo bot's `turn` for a text message at several concurrencies.
// Turns await host calls (the reply), so concurrent turns each hold a VM; beyond the worker's idle
// pool, VMs are created and disposed per turn. Usage: npm run build && node bench/tools/sandbox-micro.mjs
const dist = (path) => new URL(`../../dist/${path}`, import.meta.url).href
const { QuickJsSandbox } = await import(dist('runtime/quickjs-sandbox.js'))
const { DEMO_BOT_CODE } = await import(dist('domain/demo-bot.js'))
const { DEFAULT_LIMITS } = await import(dist('runtime/sandbox.js'))

const sandbox = new QuickJsSandbox({ workers: 1 })
let t0 = performance.now()
const checked = await sandbox.check(DEMO_BOT_CODE)
console.log(`worker start + first VM: ${(performance.now() - t0).toFixed(1)} ms (code ok: ${checked.ok})`)
t0 = performance.now()
for (let i = 0; i < 20; i++) await sandbox.check(DEMO_BOT_CODE)
console.log(`create + dispose one VM with the demo bot (check): ${((performance.now() - t0) / 20).toFixed(2)} ms`)

let hostCalls = 0
const host = {
  call: async (_method, args) => {
    hostCalls++
    return { message: { id: 'm', conversationId: 'c', userId: 'bot', payload: args?.payload ?? {}, createdAt: new Date().toISOString() } }
  },
  log() {},
}
const text = 'Hello! I would like to know the status of my order #4521, please.'
const request = (i) => ({
  botId: 'bot', version: '1', code: DEMO_BOT_CODE, entry: 'turn', limits: DEFAULT_LIMITS,
  input: JSON.stringify({
    event: {
      botId: 'bot', conversationId: `c${i}`, createdOn: new Date().toISOString(), direction: 'incoming', id: `e${i}`, integration: 'chat',
      messageId: `e${i}`, payload: { type: 'text', text }, preview: text, state: { user: {}, conversation: { messages: 3 }, bot: {}, workflow: {} },
      tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'u',
    },
    flow: null, conversationStarted: false, budgetMs: DEFAULT_LIMITS.budgetMs,
  }),
})
await sandbox.run(request(0), host)
for (const concurrency of [1, 4, 8, 50]) {
  const n = 400
  hostCalls = 0
  t0 = performance.now()
  for (let i = 0; i < n; i += concurrency) await Promise.all(Array.from({ length: concurrency }, (_, j) => sandbox.run(request(i + j), host)))
  console.log(`demo bot turn, ${String(concurrency).padStart(2)} concurrent: ${((performance.now() - t0) * 1000 / n).toFixed(0).padStart(6)} µs per turn (wall, one worker; ${(hostCalls / n).toFixed(1)} host calls per turn)`)
}
await sandbox.close()
