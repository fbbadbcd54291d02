/**
 * Shared helpers of the Files API tests (api, security, e2e): auth headers, the upsert → upload
 * flow through `app.inject`, members with a given role, bot API keys, and data-dir listings.
 */
import { randomUUID } from 'node:crypto'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'
import { hashSecret } from '../../src/lib/crypto.js'
import { randomSecret, uuidv7 } from '../../src/lib/ids.js'
import type { Harness } from '../helpers/harness.js'

export type Headers = Record<string, string>

/** The owner PAT and the demo bot, as the official client sends them. */
export const ownerHeaders = (h: Harness, over: Headers = {}): Headers => ({
  authorization: `Bearer ${h.credentials.token}`,
  'x-bot-id': h.credentials.botId,
  ...over,
})

/** Path and query of an absolute URL, for `app.inject`. */
export const pathOf = (url: string) => {
  const u = new URL(url)
  return u.pathname + u.search
}

export const uniqueKey = (prefix = 'file') => `${prefix}-${randomUUID().slice(0, 8)}.txt`

export function expectError(res: LightMyRequestResponse, status: number, type?: string): void {
  expect(res.statusCode, res.body).toBe(status)
  const body = res.json() as Record<string, unknown>
  expect(body.code).toBe(status)
  if (type) expect(body.type).toBe(type)
  expect(typeof body.id).toBe('string')
  expect((body.id as string).length).toBeGreaterThan(0)
  expect(typeof body.message).toBe('string')
}

export async function upsert(h: Harness, body: Record<string, unknown>, headers: Headers = ownerHeaders(h)) {
  return h.app.inject({ method: 'PUT', url: '/v1/files', headers, payload: body })
}

export async function upload(h: Harness, uploadUrl: string, content: Buffer | string, contentType = 'application/octet-stream') {
  return h.app.inject({ method: 'PUT', url: pathOf(uploadUrl), headers: { 'content-type': contentType }, payload: content })
}

export interface CreatedFile {
  id: string
  key: string
  url: string
  uploadUrl: string
  [field: string]: unknown
}

/** upsertFile + upload, asserting both succeed; returns the file as getFile then sees it. */
export async function createFile(
  h: Harness,
  key: string,
  content: Buffer | string,
  extra: Record<string, unknown> = {},
  headers: Headers = ownerHeaders(h),
): Promise<CreatedFile> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content
  const res = await upsert(h, { key, size: bytes.length, ...extra }, headers)
  expect(res.statusCode, res.body).toBe(200)
  const { file } = res.json() as { file: CreatedFile & { contentType: string } }
  const up = await upload(h, file.uploadUrl, bytes, file.contentType)
  expect(up.statusCode, up.body).toBe(200)
  const got = await h.app.inject({ method: 'GET', url: `/v1/files/${encodeURIComponent(file.id)}`, headers })
  expect(got.statusCode, got.body).toBe(200)
  return { ...(got.json() as { file: CreatedFile }).file, uploadUrl: file.uploadUrl }
}

export async function download(h: Harness, url: string, headers: Headers = {}) {
  return h.app.inject({ method: 'GET', url: pathOf(url), headers })
}

/** An account with `role` in the demo workspace (or no membership at all), and its PAT. */
export async function accountWithRole(h: Harness, role: string | null): Promise<{ accountId: string; token: string }> {
  const now = Date.now()
  const accountId = uuidv7()
  await h.store.createAccount({ id: accountId, email: `${accountId}@example.test`, displayName: `Test ${role ?? 'outsider'}`, createdAt: now, updatedAt: now })
  if (role !== null) await h.store.addWorkspaceMember(h.credentials.workspaceId, accountId, role, now)
  const { value } = await h.app.services.workspaces.createAccessToken(accountId, 'files test')
  return { accountId, token: value }
}

/** A bot API key (`bak_…`) of `botId`. */
export async function botApiKey(h: Harness, botId: string): Promise<string> {
  const value = randomSecret('bak')
  await h.store.createBotApiKey({ id: uuidv7(), botId, note: 'files test', createdAt: Date.now(), tokenHash: hashSecret(value) })
  return value
}

export async function secondBot(h: Harness, workspaceId = h.credentials.workspaceId): Promise<string> {
  const { bot } = await h.app.services.bots.createBot(workspaceId, { name: `Second bot ${randomUUID().slice(0, 6)}` })
  return bot.id
}

/** Every regular file under `root`, relative to it. */
export function listTree(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      if (statSync(path).isDirectory()) walk(path)
      else out.push(relative(root, path))
    }
  }
  walk(root)
  return out.sort()
}

/** Blob files on disk (not temp files) under the data dir's blob root. */
export function blobFiles(h: Harness): string[] {
  return listTree(h.dataDir).filter((p) => p.startsWith('blobs/') && !p.startsWith('blobs/tmp/'))
}

export const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
