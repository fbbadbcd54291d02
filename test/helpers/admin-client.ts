/**
 * The Admin API through app.inject, as the admin-*.test.ts suites call it: the bootstrap owner's
 * token and workspace by default, each overridable (null leaves the header out), the official
 * client's `{}` body on DELETE, and the Botpress error-body assertion.
 */
import { expect } from 'vitest'
import type { Harness } from './harness.js'
import { ISO_Z } from './formats.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

export interface Res {
  status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  text: string
}

export interface CallOptions {
  /** null: no Authorization header; undefined: the owner's token. */
  token?: string | null
  /** null: no x-workspace-id header; undefined: the demo workspace. */
  workspaceId?: string | null
  body?: unknown
  /** Exact request body text (sent as application/json). */
  raw?: string
  /** A Server-Sent Events operation (listenBotConversation): a 200 is closed once its headers came (text ''). */
  stream?: boolean
}

export { ISO_Z }

export function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

export function adminClient(h: Harness) {
  return async (method: Method, path: string, o: CallOptions = {}): Promise<Res> => {
    const headers: Record<string, string> = {}
    const token = o.token === undefined ? h.credentials.token : o.token
    if (token !== null) headers.authorization = `Bearer ${token}`
    const workspaceId = o.workspaceId === undefined ? h.credentials.workspaceId : o.workspaceId
    if (workspaceId !== null) headers['x-workspace-id'] = workspaceId
    let payload: string | Record<string, unknown> | undefined
    if (o.raw !== undefined) {
      payload = o.raw
      headers['content-type'] = 'application/json'
    } else if (o.body !== undefined) payload = o.body as Record<string, unknown>
    else if (method === 'DELETE') payload = {} // what the official client sends
    if (o.stream) return injectStream(h.app, { method, url: `/v1/admin${path}`, headers })
    const res = await h.app.inject({ method, url: `/v1/admin${path}`, headers, ...(payload !== undefined && { payload }) })
    return { status: res.statusCode, body: parseJson(res.body), text: res.body }
  }
}

/** A Botpress error body: `{id, code, type, message}` (and optional metadata), nothing else. */
export function expectError(res: Res, status: number, type: string): void {
  expect(res.status, res.text.slice(0, 500)).toBe(status)
  expect(res.body).toMatchObject({ code: status, type })
  expect(typeof res.body.id).toBe('string')
  expect(res.body.id.length).toBeGreaterThan(0)
  expect(typeof res.body.message).toBe('string')
  for (const key of Object.keys(res.body)) expect(['id', 'code', 'type', 'message', 'metadata']).toContain(key)
}

/** An SSE request through inject, left open: its status, what it has sent so far, and a way to close it. */
export async function openInjectStream(app: Harness['app'], req: { method: Method; url: string; headers: Record<string, string> }): Promise<{ status: number; headers: Record<string, unknown>; received: () => string; ended: () => Promise<string>; close: () => void }> {
  const res = await app.inject({ ...req, payloadAsStream: true })
  const stream = res.stream()
  let text = ''
  const ended = new Promise<string>((resolve) => {
    stream.on('data', (chunk: Buffer) => { text += chunk.toString('utf8') })
    stream.on('end', () => resolve(text))
    stream.on('error', () => resolve(text))
    stream.on('close', () => resolve(text))
  })
  return {
    status: res.statusCode,
    headers: res.headers,
    received: () => text,
    ended: () => ended,
    close: () => {
      ;(res.raw.res as unknown as { destroy: () => void }).destroy()
      stream.destroy()
    },
  }
}

/**
 * An SSE request through inject that does not wait for the stream's end: a 200 (headers sent) is closed at once and
 * answers text '' (its content-type in body); a refusal answers its error body as usual.
 */
export async function injectStream(app: Harness['app'], req: { method: Method; url: string; headers: Record<string, string> }): Promise<Res> {
  const s = await openInjectStream(app, req)
  if (s.status === 200) {
    s.close()
    return { status: 200, body: { contentType: s.headers['content-type'] }, text: '' }
  }
  const text = await s.ended()
  return { status: s.status, body: parseJson(text), text }
}
