import { chmod, readFile, writeFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { hashSecret } from '../lib/crypto.js'
import { randomSecret, uuidv7 } from '../lib/ids.js'
import type { Store } from '../store/store.js'
import { BotService } from './bot-service.js'
import { webchatUrl } from '../webchat/urls.js'
import { demoBotCode } from './demo-bot.js'

/** What a new user needs to talk to Parley; tools and tests rely on these exact fields. */
export interface Credentials {
  apiUrl: string
  workspaceId: string
  token: string
  botId: string
  /** `webchatUrl`: the bot's webchat page (absent from credentials written before the webchat existed). */
  chat: { webhookId: string; url: string; encryptionKey: string; webchatUrl?: string }
}

export const credentialsPath = (dataDir: string) => join(dataDir, 'credentials.json')

/**
 * First start on an empty database: a workspace, its owner account with an access token, and a
 * demo bot with the chat integration. The token is shown once and stored hashed, so the only
 * plaintext copy is credentials.json (mode 0600). Later starts create nothing, and neither do
 * instances racing the first one (a database-wide lock; see Store.withLock).
 */
export async function bootstrap(
  store: Store,
  dataDir: string,
  publicUrl: string,
  options: { demoCode?: boolean } = {},
): Promise<{ created: boolean; credentials?: Credentials }> {
  // Instances started together on an empty database: one bootstraps, the others wait for the
  // lock, then find the workspace and create nothing.
  return store.withLock('bootstrap', () => bootstrapUnlocked(store, dataDir, publicUrl, options))
}

async function bootstrapUnlocked(
  store: Store,
  dataDir: string,
  publicUrl: string,
  options: { demoCode?: boolean },
): Promise<{ created: boolean; credentials?: Credentials }> {
  if ((await store.countWorkspaces()) > 0) {
    const credentials = await readFile(credentialsPath(dataDir), 'utf8')
      .then((text) => JSON.parse(text) as Credentials)
      .catch(() => undefined)
    return { created: false, ...(credentials && { credentials }) }
  }
  const now = Date.now()
  const workspaceId = uuidv7()
  const accountId = uuidv7()
  await store.createWorkspace({ id: workspaceId, name: 'Default workspace', createdAt: now, updatedAt: now })
  await store.createAccount({ id: accountId, email: 'owner@localhost', displayName: 'Owner', createdAt: now, updatedAt: now })
  await store.addWorkspaceMember(workspaceId, accountId, 'owner', now)
  const token = randomSecret('pat')
  await store.createAccessToken({ id: uuidv7(), accountId, tokenHash: hashSecret(token), note: 'created at first start', createdAt: now })
  const { bot, integrations } = await new BotService(store).createBot(workspaceId, {
    name: 'Demo bot',
    ...(options.demoCode !== false && { code: demoBotCode(publicUrl) }),
    integrations: { chat: { enabled: true } },
  })
  const chat = integrations[0]!
  const credentials: Credentials = {
    apiUrl: publicUrl,
    workspaceId,
    token,
    botId: bot.id,
    chat: { webhookId: chat.webhookId, url: `${publicUrl}/${chat.webhookId}`, encryptionKey: chat.encryptionKey, webchatUrl: webchatUrl(publicUrl, chat.webhookId) },
  }
  const file = credentialsPath(dataDir)
  const temp = `${file}.${process.pid}.tmp`
  await writeFile(temp, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 })
  await chmod(temp, 0o600)
  await rename(temp, file)
  return { created: true, credentials }
}
