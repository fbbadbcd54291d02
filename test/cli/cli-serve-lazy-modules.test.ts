/**
 * Idle memory (issue #16): `parley serve` on SQLite loads only what serving chat needs. A server that has started
 * and answered a chat turn has not loaded PostgreSQL's driver and adapters, the knowledge extractors (HTML, CSV,
 * PDF layout, unpdf), the CLI's client commands, nor TypeBox and Kysely as their hundreds of package files (the
 * build bundles each into dist/vendor); indexing a knowledge file then loads the extractors (so the probe does
 * see what is imported later). The figures themselves (idle RSS, ready time) belong to `npm run bench -- startup`,
 * not to a test.
 *
 * The probe is a module loader hook given to the real binary with NODE_OPTIONS (test/cli/fixtures/module-probe):
 * it records each module the process loads, from the outside.
 */
import { Client } from '@botpress/client'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/ports.js'
import { ensureBuilt, FIXTURES, runCli, startCli } from './helpers.js'

const PROBE = pathToFileURL(join(FIXTURES, 'module-probe', 'register.mjs')).href

/** What an instance on SQLite serving chat must not have loaded (URL fragments). */
const NOT_AT_IDLE = {
  'pg (PostgreSQL driver)': '/node_modules/pg/',
  'PostgreSQL store': '/dist/store/postgres.js',
  'PostgreSQL pub/sub': '/dist/pubsub/postgres.js',
  'PostgreSQL blob store': '/dist/blobs/postgres.js',
  'knowledge extractors': '/dist/domain/knowledge/extract.js',
  'HTML extractor': '/dist/domain/knowledge/html.js',
  'PDF layout': '/dist/domain/knowledge/pdf-layout.js',
  unpdf: '/node_modules/unpdf/',
  'the terminal chat command': '/dist/cli/commands/chat.js',
  'the deploy command': '/dist/cli/commands/deploy.js',
  "TypeBox's package files": '/node_modules/typebox/',
  "Kysely's package files": '/node_modules/kysely/',
}

describe('parley serve: what an idle server has loaded', () => {
  let dataDir: string
  let log: string
  beforeAll(async () => {
    await ensureBuilt()
    dataDir = mkdtempSync(join(tmpdir(), 'parley-cli-lazy-'))
    log = join(dataDir, '..', `${dataDir.split('/').pop()}-modules.txt`)
    writeFileSync(log, '')
  }, 180_000)
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(log, { force: true })
  })

  const loaded = () => readFileSync(log, 'utf8').split('\n').filter(Boolean)
  const present = (fragment: string) => loaded().filter((url) => url.includes(fragment))

  it('serves a chat turn without PostgreSQL, the extractors or the client commands, and loads the extractors for the first file indexed', async () => {
    const port = await freePort()
    const server = startCli(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'warn'], /OpenAPI:/, {
      env: { NODE_OPTIONS: `--import ${PROBE}`, PARLEY_TEST_MODULE_LOG: log },
      timeoutMs: 60_000,
    })
    try {
      await server.started
      // The probe works: it saw the server's own modules and its vendored bundles.
      expect(present('/dist/main.js')).toHaveLength(1)
      expect(present('/dist/vendor/typebox.js')).toHaveLength(1)
      expect(present('/dist/vendor/kysely.js')).toHaveLength(1)

      // A chat turn with the demo bot (greeting, then `help` answered), through the CLI in its own process.
      const chat = await runCli(['chat', '--data-dir', dataDir], { input: 'help\n', timeoutMs: 30_000 })
      expect(chat.code, chat.stderr).toBe(0)
      expect(chat.stdout).toContain('you › help')
      expect(chat.stdout).toContain('Show text')

      const unexpected = Object.entries(NOT_AT_IDLE).flatMap(([what, fragment]) => present(fragment).map((url) => `${what}: ${url}`))
      expect(unexpected).toEqual([])

      // The first knowledge file indexed loads the extractors, on demand.
      const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { apiUrl: string; token: string; botId: string }
      const client = new Client({ apiUrl: credentials.apiUrl, token: credentials.token, botId: credentials.botId })
      const { file } = await client.uploadFile({
        key: 'lazy-modules/faq.html',
        content: '<html><body><h1>Opening hours</h1><p>The shop opens at nine in the morning and closes at six.</p></body></html>',
        contentType: 'text/html',
        index: true,
      })
      let status = file.status
      for (let i = 0; i < 200 && status !== 'indexing_completed' && status !== 'indexing_failed'; i++) {
        await new Promise((r) => setTimeout(r, 100))
        status = (await client.getFile({ id: file.id })).file.status
      }
      expect(status).toBe('indexing_completed')
      expect(present('/dist/domain/knowledge/extract.js')).toHaveLength(1)
      expect(present('/dist/domain/knowledge/html.js')).toHaveLength(1)
      // Still no PostgreSQL on SQLite, nor the PDF reader for an HTML file.
      expect(present('/node_modules/pg/')).toEqual([])
      expect(present('/node_modules/unpdf/')).toEqual([])
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
  })
})
