import type { Harness } from './harness.js'

/** Console calls through app.inject: the session cookie and (unless `csrf: false`) the x-parley-console header. */
export interface ConsoleRes { status: number; headers: Record<string, unknown>; text: string; body: any }

export async function consoleSignIn(h: Harness, body: { token?: string; link?: string }): Promise<{ res: ConsoleRes; cookie: string | undefined }> {
  const res = await h.app.inject({ method: 'POST', url: '/console/session', headers: { 'x-parley-console': '1', 'content-type': 'application/json' }, payload: JSON.stringify(body) })
  const set = res.headers['set-cookie']
  const cookie = (Array.isArray(set) ? set[0] : set)?.split(';')[0]
  return { res: { status: res.statusCode, headers: res.headers, text: res.body, body: parse(res.body) }, cookie }
}

export function consoleClient(h: Harness, cookie: string | undefined, workspaceId: string | null = h.credentials.workspaceId) {
  return async (method: 'GET' | 'POST' | 'DELETE', url: string, o: { csrf?: boolean; headers?: Record<string, string>; body?: unknown } = {}): Promise<ConsoleRes> => {
    const headers: Record<string, string> = { ...o.headers }
    if (o.body !== undefined) headers['content-type'] = 'application/json'
    if (cookie) headers.cookie = cookie
    if (o.csrf !== false) headers['x-parley-console'] = '1'
    if (workspaceId) headers['x-workspace-id'] = workspaceId
    const payload = o.body !== undefined ? JSON.stringify(o.body) : method === 'DELETE' ? {} : undefined
    const res = await h.app.inject({ method, url, headers, ...(payload !== undefined && { payload }) })
    return { status: res.statusCode, headers: res.headers, text: res.body, body: parse(res.body) }
  }
}

function parse(text: string): unknown {
  try { return text === '' ? undefined : JSON.parse(text) } catch { return undefined }
}
