/// <reference lib="dom" />
/** Every console call: same-origin, the session cookie, and the x-parley-console header (the CSRF proof). */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) { super(message) }
}

export let workspaceId: string | undefined
export function setWorkspace(id: string | undefined): void { workspaceId = id }

export async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  headers.set('x-parley-console', '1')
  if (workspaceId) headers.set('x-workspace-id', workspaceId)
  if (init.body !== undefined) headers.set('content-type', 'application/json')
  const res = await fetch(path, { ...init, headers, credentials: 'same-origin' })
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`
    try { message = ((await res.json()) as { message?: string }).message ?? message } catch { /* not JSON */ }
    throw new ApiError(res.status, message)
  }
  return res
}

export async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await call(path, init)
  return (res.status === 204 ? undefined : await res.json()) as T
}

/** A query string of the defined, non-empty values. */
export function qs(values: Record<string, string | number | boolean | undefined>): string {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '' && v !== false) p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}
