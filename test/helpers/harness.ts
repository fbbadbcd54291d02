import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { FastifyServerOptions } from 'fastify'
import { buildApp } from '../../src/app.js'
import type { BlobStore } from '../../src/blobs/blob-store.js'
import { closeAdapters, createAdapters } from '../../src/compose.js'
import type { BotSandbox } from '../../src/runtime/sandbox.js'
import { loadConfig, type Config } from '../../src/config.js'
import { bootstrap, type Credentials } from '../../src/domain/bootstrap.js'
import { BotService } from '../../src/domain/bot-service.js'
import type { App } from '../../src/http/types.js'
import type { PubSub } from '../../src/pubsub/pubsub.js'
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
  /** File content and webhook bodies: the local disk under dataDir, or the database (`blobs: 'postgres'`). */
  blobs: BlobStore
  /** Which engine this instance runs on. */
  storeKind: StoreKind
  /** The instance's own PostgreSQL database (fresh per startParley), when storeKind is postgres (also config.databaseUrl). */
  databaseUrl: string | undefined
  config: Config
  credentials: Credentials
  dataDir: string
  /** Base URL when started with `listen: true`, else the config's public URL. */
  baseUrl: string
  /** A second bot with its own chat integration, for cross-integration tests. */
  createChatIntegration(): Promise<{ webhookId: string; encryptionKey: string; url: string }>
  /** Stops the server and closes its store, keeping its data (the database, dataDir): see restartParley. */
  stop(): Promise<void>
  close(): Promise<void>
}

export interface StartOptions {
  listen?: boolean
  config?: Partial<Config>
  /** Settings as an operator sets them (PARLEY_…), read by loadConfig; `config` goes over the result. */
  env?: Record<string, string>
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
  /** Where bot code runs, instead of the QuickJS pool the config would build (a test double of BotSandbox). */
  sandbox?: BotSandbox
  /** The app's pino options (e.g. `{ level, stream }` to read its log lines); silent by default. */
  logger?: FastifyServerOptions['logger']
  /** What the app gets instead of the store itself (e.g. test/helpers/store-calls.ts's counting proxy); Harness.store stays the real one. */
  wrapStore?: (store: KyselyStore) => KyselyStore
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
  const databaseUrl = storeKind === 'postgres' ? await freshDatabase() : undefined
  // Wired by the composition root as `npm start` is; the harness only chooses the places and sizes.
  const config = loadConfig({ ...options.env, PARLEY_DATA_DIR: dataDir, PORT: String(port) }, {
    ...(databaseUrl && { databaseUrl, databasePoolSize: 5, blobPoolSize: 4 }),
    blobStore: options.blobs === 'postgres' && databaseUrl ? 'postgres' : 'local',
    // The built-in sentence model embeds passages in the background after indexing (a search right after indexing
    // would be lexical or reranked depending on timing) and costs a worker thread per server. Off here, and the word
    // vectors too; the suites of the built-in signals turn them on (and wait for the vectors).
    kbWordVectors: false,
    kbSentenceModel: false,
    ...options.config,
  })
  return launch(config, { storeKind, dataDir, port, databaseUrl, listen: options.listen ?? false, demoBot: options.demoBot ?? false, sandbox: options.sandbox, logger: options.logger, wrapStore: options.wrapStore })
}

/**
 * Stops `h` as `parley serve` stops on SIGTERM (open connections dropped, services stopped, store closed) and starts
 * a new server on the same database, data directory and port, with the same configuration (`config` over it): a
 * restart. Close the returned harness only (it owns the data now).
 */
export async function restartParley(h: Harness, options: { config?: Partial<Config>; sandbox?: BotSandbox } = {}): Promise<Harness> {
  await h.stop()
  const port = h.baseUrl.startsWith('http://127.0.0.1:') ? Number(new URL(h.baseUrl).port) : 0
  return launch({ ...h.config, ...options.config }, { storeKind: h.storeKind, dataDir: h.dataDir, port, databaseUrl: h.databaseUrl, listen: port !== 0, demoBot: false, sandbox: options.sandbox })
}

async function launch(config: Config, at: { storeKind: StoreKind; dataDir: string; port: number; databaseUrl: string | undefined; listen: boolean; demoBot: boolean; sandbox: BotSandbox | undefined; logger?: FastifyServerOptions['logger']; wrapStore?: ((store: KyselyStore) => KyselyStore) | undefined }): Promise<Harness> {
  const { storeKind, dataDir, port, databaseUrl } = at
  const adapters = await createAdapters(config)
  const { store, pubsub, blobs } = adapters
  const app = await buildApp({ config, ...adapters, ...(at.wrapStore && { store: at.wrapStore(store) }), logger: at.logger ?? false, ...(at.sandbox && { sandbox: at.sandbox }) })
  let baseUrl = config.publicUrl
  if (at.listen) {
    await app.listen({ port, host: '127.0.0.1' })
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  } else {
    await app.ready()
  }
  const boot = await bootstrap(store, dataDir, baseUrl, { demoCode: at.demoBot })
  const credentials = boot.credentials!
  const bots = new BotService(store)
  let stopped = false
  const stop = async (dropConnections = true) => {
    if (stopped) return
    stopped = true
    const closing = app.close()
    if (dropConnections) app.server.closeAllConnections()
    await closing
    await closeAdapters(adapters)
  }

  return {
    app,
    store,
    pubsub,
    blobs,
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
    stop: () => stop(),
    async close() {
      if (stopped) throw new Error('This harness was stopped (restartParley): close the restarted one')
      await stop(false)
      if (databaseUrl) await dropDatabase(databaseUrl)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
