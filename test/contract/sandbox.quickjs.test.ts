import { describe, expect, it } from 'vitest'
import { QuickJsSandbox } from '../../src/runtime/quickjs-sandbox.js'
import { SandboxError, type SandboxHost } from '../../src/runtime/sandbox.js'
import { describeSandboxContract } from './sandbox.contract.js'

// Two workers: the pool size of this 2-core machine (the app's default is min(4, cores)).
describeSandboxContract('QuickJsSandbox', () => new QuickJsSandbox({ workers: 2 }))

describe('QuickJsSandbox: a worker held by a runaway call', () => {
  const limits = { budgetMs: 400, timeoutMs: 1500, memoryBytes: 32 * 1024 * 1024 }
  const input = (text: string) => JSON.stringify({
    event: {
      botId: 'b', conversationId: 'c', createdOn: new Date().toISOString(), direction: 'incoming', id: `m-${text}`, integration: 'chat', messageId: `m-${text}`,
      payload: { type: 'text', text }, preview: text, state: { user: {}, conversation: {}, bot: {} }, tags: { conversation: {}, message: {}, user: {} }, type: 'text', userId: 'u',
    },
    flow: null, conversationStarted: false, budgetMs: limits.budgetMs,
  })
  const hook = (body: string) => `export const hooks = { async afterIncoming({ event, client }) { ${body} } }`

  it('one worker: a bystander already in flight there is moved to a fresh worker and completes once; the runaway fails with a timeout within its budget + margin', async () => {
    const sandbox = new QuickJsSandbox({ workers: 1 })
    try {
      const calls: string[] = []
      const logs: string[] = []
      const host: SandboxHost = {
        async call(method, args) {
          calls.push(method)
          if (method === 'getUser') await new Promise((r) => setTimeout(r, 300))
          return method === 'createMessage' ? { message: { id: 'x', payload: (args as { payload: unknown }).payload } } : { user: { id: 'u' } }
        },
        log(level, text) {
          logs.push(`${level}: ${text}`)
        },
      }
      const bystander = sandbox.run({
        botId: 'bystander', version: '1', code: hook("await client.getUser({ id: 'u' }); await client.createMessage({ payload: { type: 'text', text: 'done' } })"), entry: 'turn', input: input('x'), limits,
      }, host)
      await new Promise((r) => setTimeout(r, 100)) // the bystander is waiting on its host call when the runaway starts
      const t = Date.now()
      const runaway = sandbox.run({
        botId: 'runaway', version: '1', code: hook('const a = []; for (;;) a.push(new Array(1e5).fill(1))'), entry: 'turn', input: input('y'), limits,
      }, { call: async () => ({}), log() {} })
      const failure = await runaway.then(() => undefined, (err: unknown) => err)
      expect(failure).toBeInstanceOf(SandboxError)
      expect((failure as SandboxError).kind).toBe('timeout')
      expect(Date.now() - t).toBeLessThanOrEqual(limits.budgetMs + 1500)
      const output = JSON.parse(await bystander) as { errors: string[] }
      expect(output.errors).toEqual([])
      // it started again from the beginning on the new worker: its first host call was repeated, the reply sent once
      expect(calls.filter((m) => m === 'createMessage')).toHaveLength(1)
      expect(calls.filter((m) => m === 'getUser')).toHaveLength(2)
      expect(logs).toEqual([expect.stringMatching(/^warn: This run was restarted from the beginning on a fresh sandbox worker/)])
    } finally {
      await sandbox.close()
    }
  })
})
