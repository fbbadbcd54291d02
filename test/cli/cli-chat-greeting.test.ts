/**
 * `parley chat` with the demo bot, as the README's quick start has it: the greeting arrives when the chat opens,
 * before anything is typed, and the first message (`help`) is answered with the help menu (not swallowed by
 * the greeting).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { ensureBuilt, runCli } from './helpers.js'

describe('parley chat: the first minute', () => {
  let h: Harness

  beforeAll(async () => {
    ;[h] = await Promise.all([startParley({ listen: true, demoBot: true }), ensureBuilt()])
  }, 180_000)
  afterAll(async () => h?.close())

  it('shows the greeting first, then answers `help` with the help menu', async () => {
    const result = await runCli(['chat', '--data-dir', h.dataDir], { input: 'help\n', timeoutMs: 30_000 })
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.split('\n')
    expect(lines[0]).toMatch(/^bot › Hi! I am the Parley demo bot\. Type "help"/)
    expect(lines[1]).toBe('you › help')
    expect(lines[2]).toMatch(/^bot › /)
    expect(lines.slice(2).join('\n')).toContain('Show text')
    expect(lines.slice(2).join('\n')).toContain('Sign up')
    expect(result.stdout.match(/demo bot/g)).toHaveLength(1)
  })
})
