import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { ensureBuilt, FIXTURES, runCli, startCli } from './helpers.js'
import { join } from 'node:path'

/** bots, tokens and logs against a real server, reading credentials.json as a user would. */
describe('parley bots, tokens and logs', () => {
  let h: Harness
  /** Flags that point the CLI at the harness's data directory (its credentials.json). */
  let dir: string[]

  beforeAll(async () => {
    ;[h] = await Promise.all([startParley({ listen: true }), ensureBuilt()])
    dir = ['--data-dir', h.dataDir]
  }, 180_000)
  afterAll(async () => {
    await h?.close()
  })

  it('bots create, list (table and JSON) and delete', async () => {
    const created = await runCli(['bots', 'create', '--name', 'CLI bot', '--tag', 'env=test', '--tag', 'team=cli', ...dir])
    expect(created.code, created.stderr).toBe(0)
    const id = created.stdout.trim()
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.stderr).toContain('Created bot "CLI bot"')
    expect(created.stderr).toMatch(new RegExp(`Webchat: +${h.baseUrl}/webchat/[0-9a-f-]{36}`))
    expect(created.stderr).toContain(`parley deploy ./bot.ts --bot ${id}`)

    const table = await runCli(['bots', 'list', ...dir])
    expect(table.code).toBe(0)
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +NAME +CREATED +DEPLOYED$/)
    expect(table.stdout).toMatch(new RegExp(`${id} +CLI bot `))
    expect(table.stdout).toContain(h.credentials.botId)

    const listed = JSON.parse((await runCli(['bots', 'list', '--json', ...dir])).stdout) as Array<{ id: string; tags: Record<string, string> }>
    expect(listed.find((b) => b.id === id)?.tags).toEqual({ env: 'test', team: 'cli' })

    const json = await runCli(['bots', 'create', '--name', 'JSON bot', '--json', ...dir])
    const bot = JSON.parse(json.stdout) as { id: string; integrations: { chat: { webchatUrl: string; webhookUrl: string } } }
    expect(bot.integrations.chat.webchatUrl).toBe(`${h.baseUrl}/webchat/${bot.integrations.chat.webhookUrl.split('/').pop()}`)

    // Deleting needs --yes when nobody can be asked.
    const unconfirmed = await runCli(['bots', 'delete', id, ...dir])
    expect(unconfirmed.code).toBe(2)
    expect(unconfirmed.stderr).toMatch(/without confirmation[\s\S]*--yes/)
    const deleted = await runCli(['bots', 'delete', id, '--yes', ...dir])
    expect(deleted.code).toBe(0)
    expect(deleted.stderr).toContain(`Deleted bot ${id}`)
    const again = await runCli(['bots', 'delete', id, '--yes', ...dir])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/ResourceNotFound[\s\S]*parley bots list/)
    expect((await runCli(['bots', 'list', ...dir])).stdout).not.toContain(id)
    await runCli(['bots', 'delete', bot.id, '-y', ...dir])
  })

  it('takes the server, token and workspace from flags or environment variables instead of credentials.json', async () => {
    const { apiUrl, token, workspaceId } = h.credentials
    const byEnv = await runCli(['bots', 'list', '--json'], { env: { PARLEY_API_URL: apiUrl, PARLEY_TOKEN: token, PARLEY_WORKSPACE_ID: workspaceId, PARLEY_DATA_DIR: '/nonexistent' } })
    expect(byEnv.code, byEnv.stderr).toBe(0)
    expect(JSON.parse(byEnv.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ id: h.credentials.botId })]))
    const byFlags = await runCli(['bots', 'list', '--api-url', apiUrl, '--token', token, '--workspace', workspaceId, '--data-dir', '/nonexistent'])
    expect(byFlags.code).toBe(0)
    // The data directory can come from PARLEY_DATA_DIR.
    expect((await runCli(['bots', 'list'], { env: { PARLEY_DATA_DIR: h.dataDir } })).code).toBe(0)
    // A flag wins over credentials.json.
    const wrongToken = await runCli(['bots', 'list', '--token', 'pat_wrong', ...dir])
    expect(wrongToken.code).toBe(1)
    expect(wrongToken.stderr).toMatch(/Unauthorized[\s\S]*--token/)
    const wrongWorkspace = await runCli(['bots', 'list', '--workspace', '00000000-0000-7000-8000-000000000000', ...dir])
    expect(wrongWorkspace.code).toBe(1)
  })

  it('console prints a one-time sign-in link that works once', async () => {
    const printed = await runCli(['console', ...dir])
    expect(printed.code, printed.stderr).toBe(0)
    const url = new URL(printed.stdout.trim())
    expect(`${url.origin}${url.pathname}`).toBe(`${h.baseUrl}/console/`)
    expect(printed.stderr).toContain('works once')
    const link = decodeURIComponent(url.hash.replace(/^#link=/, ''))
    const signIn = () => fetch(`${h.baseUrl}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-parley-console': '1' }, body: JSON.stringify({ link }) })
    const first = await signIn()
    expect(first.status).toBe(200)
    expect(first.headers.get('set-cookie')).toMatch(/^parley_console=.+; HttpOnly; SameSite=Strict$/)
    expect((await signIn()).status).toBe(401)
  })

  it('tokens create, list and revoke', async () => {
    const created = await runCli(['tokens', 'create', '--note', 'cli test token', ...dir])
    expect(created.code, created.stderr).toBe(0)
    const value = created.stdout.trim()
    expect(value).toMatch(/^pat_/)
    expect(created.stderr).toContain('only time its value is shown')

    // The new token works on its own.
    const withNew = await runCli(['tokens', 'list', '--json', '--token', value, ...dir])
    expect(withNew.code).toBe(0)
    const pats = JSON.parse(withNew.stdout) as Array<{ id: string; note: string }>
    const pat = pats.find((p) => p.note === 'cli test token')!
    expect(pat).toBeDefined()
    expect(JSON.stringify(pats)).not.toContain(value) // values are never listed

    const table = await runCli(['tokens', 'list', ...dir])
    expect(table.stdout).toMatch(new RegExp(`${pat.id} +\\S+ +cli test token`))

    const json = JSON.parse((await runCli(['tokens', 'create', '--json', ...dir])).stdout) as { id: string; value: string; note: string }
    expect(json.note).toMatch(/^parley CLI /)
    expect(json.value).toMatch(/^pat_/)

    const revoked = await runCli(['tokens', 'revoke', pat.id, ...dir])
    expect(revoked.code).toBe(0)
    const refused = await runCli(['tokens', 'list', '--token', value, ...dir])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('Unauthorized')
    expect((await runCli(['tokens', 'revoke', pat.id, ...dir])).code).toBe(1)
    await runCli(['tokens', 'revoke', json.id, ...dir])
  })

  it('logs prints a bot\'s logs, and --follow shows new entries as they come', async () => {
    const created = await runCli(['bots', 'create', '--name', 'Logger', ...dir])
    const botId = created.stdout.trim()
    const deployed = await runCli(['deploy', join(FIXTURES, 'ts-bot'), '--bot', botId, ...dir])
    expect(deployed.code, deployed.stderr).toBe(0)
    const bot = JSON.parse((await runCli(['bots', 'create', '--json', ...dir])).stdout) as { id: string } // another bot: its logs stay apart
    const chatUrl = `${h.baseUrl}/${(await h.app.inject({ method: 'GET', url: `/v1/admin/bots/${botId}`, headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId } })).json<{ bot: { integrations: { chat: { webhookId: string } } } }>().bot.integrations.chat.webhookId}`

    const talk = await runCli(['chat', '--chat-url', chatUrl], { input: 'first line\n' })
    expect(talk.code, talk.stderr).toBe(0)
    const once = await runCli(['logs', botId, ...dir])
    expect(once.code).toBe(0)
    expect(once.stdout).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z info +\[[0-9a-f-]+\] heard first line$/m)
    expect((await runCli(['logs', bot.id, ...dir])).stdout).toBe('')

    const json = await runCli(['logs', botId, '--json', ...dir])
    expect(JSON.parse(json.stdout.trim().split('\n')[0]!)).toMatchObject({ level: 'info', message: 'heard first line' })
    expect((await runCli(['logs', botId, '--since', '1h', ...dir])).stdout).toContain('heard first line')
    expect((await runCli(['logs', botId, '--since', new Date(Date.now() + 60_000).toISOString(), ...dir])).stdout).toBe('')

    const follow = startCli(['logs', botId, '--follow', '--interval', '200', ...dir], /heard first line/)
    try {
      await follow.started
      await runCli(['chat', '--chat-url', chatUrl], { input: 'second line\n' })
      await expect.poll(() => follow.output.stdout, { timeout: 10_000 }).toContain('heard second line')
      await new Promise((r) => setTimeout(r, 600)) // a few more polls: nothing is printed twice
      expect(follow.output.stdout.match(/heard first line/g)).toHaveLength(1)
      expect(follow.output.stdout.match(/heard second line/g)).toHaveLength(1)
    } finally {
      follow.child.kill('SIGINT')
    }
    expect(await follow.exited).toBe(0)

    const unknown = await runCli(['logs', '00000000-0000-7000-8000-000000000000', ...dir])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('ResourceNotFound')
  })
})
