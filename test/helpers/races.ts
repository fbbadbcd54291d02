/**
 * Deterministic interleavings for race tests: a seam at a store method (the real store, not a mock), so that
 * another write lands exactly between a service's checks and its own write, every run, on both engines.
 */
import { expect } from 'vitest'
import type { Harness } from './harness.js'
import { adminClient, expectError, type Res } from './admin-client.js'
import { ChatClient } from './chat-client.js'

/**
 * Runs `action` just before the next call of `target[method]`, then lets that call through to the real method;
 * the method is restored at once, so later calls are untouched. `ran()` tells whether the seam was reached.
 */
export function beforeNextCall<T extends object, K extends keyof T>(target: T, method: K, action: () => Promise<unknown>): { ran: () => boolean } {
  const real = target[method] as unknown as (...args: unknown[]) => Promise<unknown>
  let ran = false
  const seam = async (...args: unknown[]) => {
    ;(target as Record<PropertyKey, unknown>)[method] = real
    ran = true
    await action()
    return real.apply(target, args)
  }
  ;(target as Record<PropertyKey, unknown>)[method] = seam
  return { ran: () => ran }
}

/** A bot of its own (with a chat integration), in the demo workspace or in a new workspace of its own. */
export interface RaceBot {
  botId: string
  workspaceId: string
  webhookId: string
}

/** A new bot with a chat webhook (webchat uploads of images allowed); `ownWorkspace` puts it in a new workspace. */
export async function newChatBot(h: Harness, ownWorkspace = false): Promise<RaceBot> {
  const admin = adminClient(h)
  let workspaceId = h.credentials.workspaceId
  if (ownWorkspace) {
    const ws = await admin('POST', '/workspaces', { body: { name: `race ${Math.random().toString(36).slice(2, 8)}` } })
    if (ws.status >= 300) throw new Error(`createWorkspace: ${ws.text}`)
    workspaceId = ws.body.id
  }
  const res = await admin('POST', '/bots', {
    workspaceId,
    body: { name: 'race', integrations: { chat: { enabled: true, configuration: { webchat: { uploadTypes: 'image/*', uploadMaxBytes: 1_000_000 } } } } },
  })
  if (res.status !== 201) throw new Error(`createBot: ${res.text}`)
  return { botId: res.body.bot.id, workspaceId, webhookId: res.body.bot.integrations.chat.webhookId }
}

/** A new user of the bot's chat webhook, and its key. */
export async function chatUserKey(h: Harness, bot: RaceBot): Promise<string> {
  return (await ChatClient.of(h).withWebhook(bot.webhookId).createUser()).key
}

/** Deletes the bot, or its whole workspace, through the Admin API. */
export async function deleteRaceBot(h: Harness, bot: RaceBot, what: 'bot' | 'workspace'): Promise<void> {
  const admin = adminClient(h)
  const res = what === 'bot'
    ? await admin('DELETE', `/bots/${bot.botId}`, { workspaceId: bot.workspaceId })
    : await admin('DELETE', `/workspaces/${bot.workspaceId}`, { workspaceId: null })
  if (res.status !== 200) throw new Error(`delete ${what}: ${res.text}`)
}

/** A 404 ResourceNotFound in the Botpress error body whose message matches `message`. */
export function expectGone(res: Res, message: RegExp): void {
  expectError(res, 404, 'ResourceNotFound')
  expect(res.body.message).toMatch(message)
}
