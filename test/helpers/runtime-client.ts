/**
 * The Runtime API as a bot program calls it: the official @botpress/client with a bot API key
 * created through the Admin API (createBotApiKey) and the bot's id.
 */
import { Client, isApiError } from '@botpress/client'
import type { Harness } from './harness.js'

/** An Admin client of the bootstrap owner (the demo workspace). */
export function adminClient(h: Harness): Client {
  return new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
}

/** A new bot API key (`bak_…`) of `botId` and its id, through the Admin API. */
export async function createBotKey(h: Harness, botId = h.credentials.botId): Promise<{ id: string; value: string }> {
  const key = await adminClient(h).createBotApiKey({ botId, note: 'runtime test' })
  return { id: key.id, value: key.value }
}

/** The official client acting as `botId` with a fresh bot API key of it (requires `listen: true`). */
export async function runtimeClient(h: Harness, botId = h.credentials.botId): Promise<Client> {
  const { value } = await createBotKey(h, botId)
  return new Client({ apiUrl: h.baseUrl, token: value, botId })
}

/** The error a call of @botpress/client fails with (code, type, message); throws when the call succeeds. */
export async function failure(p: Promise<unknown>): Promise<{ code: number; type: string; message: string }> {
  try { await p } catch (err) {
    if (isApiError(err)) return { code: err.code, type: err.type, message: err.message }
    throw err
  }
  throw new Error('expected a failure')
}
