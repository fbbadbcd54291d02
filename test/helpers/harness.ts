import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../src/app.js'
import type { BlobStore } from '../../src/blobs/blob-store.js'
import { createPostgresBlobStore } from '../../src/blobs/postgres.js'
import { loadConfig, type Config } from '../../src/config.js'
import { bootstrap, type Credentials } from '../../src/domain/bootstrap.js'
import { BotService } from '../../src/domain/bot-service.js'
import type { App } from '../../src/http/types.js'
import { MemoryPubSub } from '../../src/pubsub/memory.js'
import { PostgresPubSub } from '../../src/pubsub/postgres.js'
import type { PubSub } from '../../src/pubsub/pubsub.js'
import { createPostgresStore } from '../../src/store/postgres.js'
import { createSqliteStore } from '../../src/store/sqlite.js'
import type { KyselyStore } from '../../src/store/kysely/kysely-store.js'
import { dropDatabase, freshDatabase, testStoreKind } from './pg.js'
export { freePort } from './ports.js'
import { freePort } from './ports.js'

export type StoreKind = 'sqlite' | 'postgres'

export interface Harness {
  app: App
  store: KyselyStore
  /** MemoryPubSub on SQLite, PostgresPubSub (LISTEN/NOTIFY) on PostgreSQL. */
  pubsub: PubSub & { subscriptionCount(): number }
  /** Which engine this instance runs on. */
  storeKind: StoreKind
  /** The instance's own PostgreSQL database (fresh per startParley), when storeKind is postgres. */
  databaseUrl: string | undefined
  config: Config
  credentials: Credentials
  dataDir: string
  /** Base URL when started with `listen: true`, else the config's public URL. */
  baseUrl: string
  /** A second bot with its own chat integration, for cross-integration tests. */
  createChatIntegration(): Promise<{ webhookId: string; encryptionKey: string; url: string }>
  close(): Promise<void>
}

export interface StartOptions {
  listen?: boolean
  config?: Partial<Config>
  /**
   * `demoBot: true` keeps the demo bot's code (it answers every message); by default the demo bot has
   * no code, so tests see exactly the messages they create.
   */
  demoBot?: boolean
  /** The engine; defaults to PARLEY_TEST_STORE (sqlite unless set to postgres). */
  store?: StoreKind
  /**
   * Where file content goes: 'postgres' puts it in the instance's database when the store is PostgreSQL
   * (as `parley serve` does there by default); otherwise, and by default, the local disk under dataDir.
   */
  blobs?: 'local' | 'postgres'
}

/**
 * A real Parley, bootstrapped exactly as `npm start` does, on a fresh store: a SQLite file in a
 * fresh temporary directory, or (store 'postgres') a fresh database on the test run's PostgreSQL
 * cluster with LISTEN/NOTIFY pub/sub. The temporary directory holds credentials.json and blobs
 * either way. With `listen: true` it also listens on a free 127.0.0.1 port for the official
 * clients; otherwise tests use `app.inject`.
 */
export async function startParley(options: StartOptions = {}): Promise<Harness> {
  const storeKind = options.store ?? testStoreKind()
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-'))
  // The port is chosen before the app is built, so every URL the app writes (webhookUrl, upload URLs) is reachable.
  const port = options.listen ? await freePort() : 0
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PORT: String(port) }, options.config)
  let databaseUrl: string | undefined
  let store: KyselyStore
  let pubsub: PubSub & { subscriptionCount(): number }
  if (storeKind === 'postgres') {
    databaseUrl = await freshDatabase()
    store = await createPostgresStore({ url: databaseUrl, poolSize: 5, sendAppendNotifications: true })
    pubsub = new PostgresPubSub({ url: databaseUrl, publishPoolSize: 2 })
  } else {
    store = await createSqliteStore({ file: join(dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
    pubsub = new MemoryPubSub()
  }
  const blobs: BlobStore | undefined = options.blobs === 'postgres' && databaseUrl ? createPostgresBlobStore({ url: databaseUrl, poolSize: 4 }) : undefined
  let app = await buildApp({ config, store, pubsub, blobs, logger: false })
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
    storeKind,
    databaseUrl,
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
      await pubsub.close()
      await blobs?.close?.()
      await store.close()
      if (databaseUrl) await dropDatabase(databaseUrl)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
