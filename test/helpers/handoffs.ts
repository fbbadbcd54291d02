/**
 * Fixtures for the human-handoff suites: a bot of a workspace with a user's conversation (Chat API) and,
 * optionally, an open handoff of it (Admin API), all through app.inject as the workspace's owner.
 */
import { expect } from 'vitest'
import type { Harness } from './harness.js'

export interface HandoffFixture { botId: string; webhookId: string; conversationId: string; userId: string; userKey: string }

async function call(h: Harness, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  const res = await h.app.inject({ method, url, headers, ...(body !== undefined && { payload: body as Record<string, unknown> }) })
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300)
  return JSON.parse(res.body)
}

/** A new bot in `workspaceId` and a conversation of a new Chat API user; with `open`, its handoff waits. */
export async function handoffFixture(h: Harness, token: string, workspaceId: string, options: { open?: boolean; reason?: string } = {}): Promise<HandoffFixture> {
  const admin = { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId }
  const botId = (await call(h, 'POST', '/v1/admin/bots', admin, { name: 'handoff fixture' })).bot.id as string
  const bot = (await call(h, 'GET', `/v1/admin/bots/${botId}`, admin)).bot
  const webhookId = bot.integrations.chat.webhookId as string
  const created = await call(h, 'POST', `/${webhookId}/users`, {}, {})
  const userKey = created.key as string
  const conversationId = (await call(h, 'POST', `/${webhookId}/conversations`, { 'x-user-key': userKey }, {})).conversation.id as string
  if (options.open ?? true) await call(h, 'POST', `/v1/admin/bots/${botId}/handoffs`, admin, { conversationId, ...(options.reason && { reason: options.reason }) })
  return { botId, webhookId, conversationId, userId: created.user.id as string, userKey }
}
