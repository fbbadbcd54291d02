import { randomBytes, randomUUID } from 'node:crypto'
import { uuidv7 } from '../lib/ids.js'
import type { BotRow, IntegrationRow, Store } from '../store/store.js'

/** Built-in integrations, keyed by name. Each enabled one gets its own webhook id and key. */
export const BUILT_IN_INTEGRATIONS = ['chat'] as const
export type IntegrationName = (typeof BUILT_IN_INTEGRATIONS)[number]

export function newIntegration(botId: string, name: IntegrationName, now: number, encryptionKey?: string): IntegrationRow {
  return {
    id: uuidv7(),
    botId,
    name,
    webhookId: randomUUID(),
    encryptionKey: encryptionKey ?? randomBytes(32).toString('base64url'),
    enabled: true,
    configuration: {},
    createdAt: now,
    updatedAt: now,
  }
}

export class BotService {
  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {}

  async createBot(workspaceId: string, name: string, integrations: IntegrationName[]): Promise<{ bot: BotRow; integrations: IntegrationRow[] }> {
    const now = this.clock()
    const bot: BotRow = { id: uuidv7(), workspaceId, name, tags: {}, code: null, deployedAt: null, createdAt: now, updatedAt: now }
    const rows = integrations.map((n) => newIntegration(bot.id, n, now))
    await this.store.createBot(bot, rows)
    return { bot, integrations: rows }
  }
}
