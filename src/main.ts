import { join } from 'node:path'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { bootstrap, credentialsPath } from './domain/bootstrap.js'
import { MemoryPubSub } from './pubsub/memory.js'
import { createSqliteStore } from './store/sqlite.js'

async function main(): Promise<void> {
  const config = loadConfig()
  const store = await createSqliteStore({ file: join(config.dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
  const pubsub = new MemoryPubSub()
  const app = await buildApp({ config, store, pubsub })
  const log = app.log

  const boot = await bootstrap(store, config.dataDir, config.publicUrl)
  await app.listen({ port: config.port, host: config.host })
  log.info({ url: config.publicUrl, dataDir: config.dataDir, store: store.dialect }, `Parley listening on ${config.publicUrl}`)

  const c = boot.credentials
  const banner = [
    '',
    `  Parley is running at ${config.publicUrl}`,
    `  Data directory:      ${config.dataDir} (SQLite, synchronous=${config.sqliteSynchronous})`,
    ...(c
      ? [
          `  Demo bot:            ${c.botId}`,
          `  Chat API URL:        ${c.chat.url}`,
          `  Workspace:           ${c.workspaceId}`,
          boot.created ? `  Access token:        ${c.token}   (shown once; also in ${credentialsPath(config.dataDir)})` : `  Credentials:         ${credentialsPath(config.dataDir)}`,
        ]
      : [`  (credentials.json is missing from ${config.dataDir}; the database was bootstrapped elsewhere)`]),
    `  OpenAPI:             ${config.publicUrl}/openapi.json`,
    '',
  ]
  process.stdout.write(banner.join('\n') + '\n')

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
      await pubsub.close()
      await store.close()
      log.info('shut down cleanly')
      process.exit(0)
    } catch (err) {
      log.error({ err }, 'error during shutdown')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

main().catch((err: unknown) => {
  process.stderr.write(`Parley failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
