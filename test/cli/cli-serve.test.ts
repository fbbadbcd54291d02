import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt, runCli, startCli } from './helpers.js'
import { freePort } from '../helpers/ports.js'

describe('parley serve', () => {
  let dataDir: string
  beforeAll(async () => {
    await ensureBuilt()
    dataDir = mkdtempSync(join(tmpdir(), 'parley-cli-serve-'))
  }, 180_000)
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('starts a server from its flags, prints the webchat address, writes credentials.json, and stops on SIGTERM', async () => {
    const port = await freePort()
    const server = startCli(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'warn'], /OpenAPI:/, {
      env: { PORT: '1', PARLEY_DATA_DIR: '/nonexistent' }, // flags win over the environment
    })
    try {
      await server.started
      const base = `http://127.0.0.1:${port}`
      const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { apiUrl: string; chat: { webhookId: string; webchatUrl: string } }
      expect((statSync(join(dataDir, 'credentials.json')).mode & 0o777).toString(8)).toBe('600')
      expect(credentials.apiUrl).toBe(base)
      expect(credentials.chat.webchatUrl).toBe(`${base}/webchat/${credentials.chat.webhookId}`)
      expect(server.output.stdout).toContain(`Parley is running at ${base}`)
      expect(server.output.stdout).toMatch(new RegExp(`Webchat: +${credentials.chat.webchatUrl.replace(/[.]/g, '\\.')}`))
      expect(server.output.stdout).toContain('Access token:')
      // Which semantic signal knowledge search uses (the default: the built-in sentence model).
      expect(server.output.stdout).toMatch(/Knowledge search: +lexical, reranked by the built-in sentence model/)

      const page = await fetch(credentials.chat.webchatUrl)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
      // The CLI talks to it with nothing but the data directory.
      const bots = await runCli(['bots', 'list', '--data-dir', dataDir])
      expect(bots.code).toBe(0)
      expect(bots.stdout).toContain('Demo bot')
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)

    // A second start on the same data directory creates nothing and says where the credentials are.
    const port2 = await freePort()
    const again = startCli(['serve', '-p', String(port2), '--data-dir', dataDir, '--log-level', 'warn'], /OpenAPI:/)
    try {
      await again.started
      expect(again.output.stdout).toContain(`Credentials:         ${join(dataDir, 'credentials.json')}`)
      expect(again.output.stdout).not.toContain('Access token:')
    } finally {
      again.child.kill('SIGINT')
    }
    expect(await again.exited).toBe(0)
  })
})
