import { consoleUrl } from './console/urls.js'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { buildApp } from './app.js'
import { closeAdapters, createAdapters } from './compose.js'
import { knowledgeLabel, llmLabel, loadConfig, unknownSettings } from './config.js'
import { bootstrap, credentialsPath } from './domain/bootstrap.js'
import { redactDatabaseUrl } from './store/database-url.js'
import { webchatUrl } from './webchat/urls.js'

async function main(): Promise<void> {
  const config = loadConfig()
  // SQLite creates it when opening its file; on PostgreSQL nothing else would before credentials.json is written.
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 })
  // Connection problems of idle pooled connections and of the LISTEN connection are logged once the app's logger exists.
  let warn: (err: Error, what: string) => void = () => {}
  const adapters = await createAdapters(config, { onConnectionError: (err, what) => warn(err, what) })
  const { store } = adapters
  const app = await buildApp({ config, ...adapters })
  const log = app.log
  warn = (err, what) => log.warn({ err: { message: err.message, code: (err as { code?: unknown }).code } }, what)
  for (const { name, closest } of unknownSettings(process.env)) {
    log.warn(`${name} is not a Parley setting and is ignored${closest ? ` (did you mean ${closest}?)` : ''}; the settings: docs/operating.md`)
  }
  const storeLabel = config.databaseUrl
    ? `PostgreSQL ${redactDatabaseUrl(config.databaseUrl)} (pool of ${config.databasePoolSize} connections)`
    : `SQLite ${join(config.dataDir, 'parley.db')} (synchronous=${config.sqliteSynchronous})`

  // Signals are handled before anything is printed, so a stop right after start is still graceful.
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'shutting down: finishing in-flight requests')
    const timer = setTimeout(() => {
      log.error('shutdown took longer than 10 s; exiting')
      process.exit(1)
    }, 10_000)
    timer.unref()
    try {
      await app.close()
      await closeAdapters(adapters)
      log.info('shut down cleanly')
      process.exit(0)
    } catch (err) {
      log.error({ err }, 'error during shutdown')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  const boot = await bootstrap(store, config.dataDir, config.publicUrl)
  await app.listen({ port: config.port, host: config.host })
  log.info({ url: config.publicUrl, dataDir: config.dataDir, store: store.dialect, ...(config.databaseUrl && { database: redactDatabaseUrl(config.databaseUrl) }) }, `Parley listening on ${config.publicUrl}`)

  const c = boot.credentials
  const banner = [
    '',
    `  Parley is running at ${config.publicUrl}`,
    `  Store:               ${storeLabel}`,
    `  File content:        ${config.blobStore === 'postgres' ? `PostgreSQL (shared by every instance; ${config.blobPoolSize} transfer connections)` : `${join(config.dataDir, 'blobs')} (local disk)`}`,
    `  Data directory:      ${config.dataDir}`,
    `  Knowledge search:    ${knowledgeLabel(config)}`,
    `  Language models:     ${llmLabel(config)}`,
    ...(c
      ? [
          `  Demo bot:            ${c.botId}`,
          `  Webchat:             ${webchatUrl(config.publicUrl, c.chat.webhookId)}   (open it in a browser to talk to the demo bot)`,
          `  Chat API URL:        ${c.chat.url}`,
          `  Workspace:           ${c.workspaceId}`,
          boot.created ? `  Access token:        ${c.token}   (shown once; also in ${credentialsPath(config.dataDir)})` : `  Credentials:         ${credentialsPath(config.dataDir)}`,
        ]
      : [`  (credentials.json is missing from ${config.dataDir}; the database was bootstrapped elsewhere)`]),
    `  Console:             ${consoleUrl(config.publicUrl)}   (sign in with the access token, or run \`parley console\` for a one-time link)`,
    `  OpenAPI:             ${config.publicUrl}/openapi.json`,
    '',
  ]
  process.stdout.write(banner.join('\n') + '\n')

}

main().catch((err: unknown) => {
  process.stderr.write(`Parley failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
