import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type AddressInfo } from 'node:net'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { bootstrap, type Credentials } from '../../src/domain/bootstrap.js'
import { BotService } from '../../src/domain/bot-service.js'
import type { App } from '../../src/http/types.js'
import { MemoryPubSub } from '../../src/pubsub/memory.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface Harness {
  app: App
  store: KyselyStore
  pubsub: MemoryPubSub
  config: Config
  credentials: Credentials
  dataDir: string
  /** Base URL when started with `listen: true`, else the config's public URL. */
  baseUrl: string
  /** A second bot with its own chat integration, for cross-integration tests. */
  createChatIntegration(): Promise<{ webhookId: string; encryptionKey: string; url: string }>
  close(): Promise<void>
}

/**
 * A real Parley on a real SQLite file in a fresh temporary directory, bootstrapped exactly as
 * `npm start` does. With `listen: true` it also listens on a free 127.0.0.1 port for the
 * official clients; otherwise tests use `app.inject`.
 */
/**
 * `demoBot: true` keeps the demo bot's code (it answers every message); by default the demo bot has
 * no code, so tests see exactly the messages they create.
 */
export async function startParley(options: { listen?: boolean; config?: Partial<Config>; demoBot?: boolean } = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-'))
  // The port is chosen before the app is built, so every URL the app writes (webhookUrl, upload URLs) is reachable.
  const port = options.listen ? await freePort() : 0
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: String(port) }, options.config)
  const store = await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
  const pubsub = new MemoryPubSub()
  let app = await buildApp({ config, store, pubsub, logger: false })
  let baseUrl = config.publicUrl
  if (options.listen) {
    await app.listen({ port, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  } else {
    await app.ready()
  }
  const boot = await bootstrap(store, dataDir, baseUrl, { demoCode: options.demoBot ?? false })
  const credentials = boot.credentials!
  const bots = new BotService(store)

  return {
    app,
    store,
    pubsub,
    config,
    credentials,
    dataDir,
    baseUrl,
    async createChatIntegration() {
      const { integrations } = await bots.createBot(credentials.workspaceId, { name: 'Other bot', integrations: { chat: { enabled: true } } })
      const chat = integrations[0]!
      return { webhookId: chat.webhookId, encryptionKey: chat.encryptionKey, url: `${baseUrl}/${chat.webhookId}` }
    },
    async close() {
      await app.close()
      await store.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
