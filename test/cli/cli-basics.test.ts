import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt, runCli } from './helpers.js'

/** Help, usage errors and exit codes: no server needed. */
describe('parley: help, usage errors and exit codes', () => {
  let empty: string
  beforeAll(async () => {
    await ensureBuilt()
    empty = mkdtempSync(join(tmpdir(), 'parley-cli-empty-'))
  }, 180_000)
  afterAll(() => rmSync(empty, { recursive: true, force: true }))

  it('prints the command list with --help (exit 0) and without a command (exit 2)', async () => {
    const help = await runCli(['--help'])
    expect(help.code).toBe(0)
    for (const name of ['serve', 'deploy', 'chat', 'logs', 'bots list', 'bots create', 'bots delete', 'tokens create', 'tokens list', 'tokens revoke']) {
      expect(help.stdout).toContain(`  ${name} `)
    }
    expect(help.stdout).toContain('Exit codes: 0 success, 1')
    const none = await runCli([])
    expect(none.code).toBe(2)
    expect(none.stdout).toContain('Usage: parley <command>')
    expect((await runCli(['help', 'deploy'])).stdout).toContain('parley deploy <file-or-folder>')
  })

  it.each([
    ['serve'], ['deploy'], ['chat'], ['logs'], ['bots', 'list'], ['bots', 'create'], ['bots', 'delete'],
    ['tokens', 'create'], ['tokens', 'list'], ['tokens', 'revoke'],
  ].map((c) => [c.join(' '), c] as const))('parley %s --help shows usage, options and examples', async (_title, name) => {
    const result = await runCli([...name, '--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`parley ${name.join(' ')} — `)
    expect(result.stdout).toContain('Usage:')
    expect(result.stdout).toContain('--help')
    expect(result.stdout).toContain('Examples:')
    expect(result.stderr).toBe('')
    // -h works too
    expect((await runCli([...name, '-h'])).stdout).toBe(result.stdout)
  })

  it('groups print their subcommands', async () => {
    for (const group of ['bots', 'tokens']) {
      const help = await runCli([group, '--help'])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain(`Usage: parley ${group} <`)
      expect((await runCli([group])).code).toBe(2)
    }
  })

  it('prints its version', async () => {
    const result = await runCli(['--version'])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('exits 2 with a hint on unknown commands, unknown flags and missing arguments', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /Unknown command "frobnicate"[\s\S]*parley --help/],
      [['bots', 'rename'], /Unknown command "bots rename"[\s\S]*list, create, delete/],
      [['bots', 'list', '--bogus'], /Unknown option '--bogus'[\s\S]*parley bots list --help/],
      [['deploy'], /Missing the bot's file or folder[\s\S]*Usage: parley deploy/],
      [['bots', 'delete'], /Missing the id of the bot/],
      [['tokens', 'revoke'], /Missing the id of the token/],
      [['bots', 'list', 'extra'], /Unexpected argument "extra"/],
      [['logs', '--since', 'yesterday-ish', '--api-url', 'http://127.0.0.1:9', '--token', 't', '--workspace', 'w'], /--since "yesterday-ish"/],
      [['serve', '--port', 'eighty'], /--port must be a number/],
      [['deploy', join(empty, 'missing.ts')], /No such file or folder/],
      [['deploy', empty], /No bot entry file[\s\S]*bot\.ts/],
    ]
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: empty })
      expect(result.code, `parley ${args.join(' ')}\n${result.stderr}`).toBe(2)
      expect(result.stderr).toMatch(message)
      expect(result.stdout).toBe('')
    }
  })

  it('says where credentials come from when there are none (exit 2)', async () => {
    const result = await runCli(['bots', 'list'], { cwd: empty })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`no ${join(empty, 'data', 'credentials.json')}`)
    expect(result.stderr).toContain('--api-url')
    const noToken = await runCli(['bots', 'list', '--api-url', 'http://127.0.0.1:9'], { cwd: empty })
    expect(noToken.code).toBe(2)
    expect(noToken.stderr).toMatch(/No access token[\s\S]*PARLEY_TOKEN/)
    const badUrl = await runCli(['bots', 'list', '--api-url', 'not a url', '--token', 'x'], { cwd: empty })
    expect(badUrl.code).toBe(2)
    const noChat = await runCli(['chat'], { cwd: empty })
    expect(noChat.code).toBe(2)
    expect(noChat.stderr).toContain('--chat-url')
  })

  it('exits 1 when the server cannot be reached, and says what to check', async () => {
    const result = await runCli(['bots', 'list', '--api-url', 'http://127.0.0.1:9', '--token', 'pat_x', '--workspace', 'w'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/Cannot reach Parley at http:\/\/127\.0\.0\.1:9[\s\S]*parley serve/)
  })
})
