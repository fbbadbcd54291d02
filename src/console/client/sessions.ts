/// <reference lib="dom" />
import { h } from '../../webchat/client/dom.js'
import { json } from './api.js'

interface Session { id: string; createdAt: string; expiresAt: string; personalAccessTokenId: string | null; current: boolean }

/**
 * The account's console sessions (listConsoleSessions): when each began and ends, the token it was signed in with,
 * a Revoke button each (revokeConsoleSession), and "Sign out everywhere" (revokeConsoleSessions). Revoking this
 * browser's own session signs it out (`onSignedOut`).
 */
export function sessionsPage({ main, onSignedOut }: { main: HTMLElement; onSignedOut: (message: string) => void }): () => void {
  const status = h('p', { class: 'meta', attrs: { role: 'status' } })
  const body = h('tbody', { attrs: { id: 'sessions' } })
  let alive = true

  /** Lists the sessions; `done` (what was just done) stays in the status line with the count. */
  async function load(done?: string): Promise<void> {
    const { sessions } = await json<{ sessions: Session[] }>('/v1/admin/account/console-sessions')
    if (!alive) return
    body.replaceChildren(...sessions.map((s) => h('tr', { attrs: { 'data-session': s.id } }, [
      h('td', { text: new Date(s.createdAt).toLocaleString() }),
      h('td', { text: new Date(s.expiresAt).toLocaleString() }),
      h('td', { text: s.personalAccessTokenId ?? '' }),
      h('td', { text: s.current ? 'this browser' : '' }),
      h('td', {}, [h('button', {
        class: 'secondary', attrs: { type: 'button', 'aria-label': `Revoke the session started ${s.createdAt}${s.current ? ' (this browser)' : ''}` }, text: 'Revoke',
        on: { click: () => void revoke(s) },
      })]),
    ])))
    status.textContent = done === undefined ? `${sessions.length} session(s)` : `${done} ${sessions.length} session(s) left.`
  }

  async function revoke(s: Session): Promise<void> {
    await json(`/v1/admin/account/console-sessions/${encodeURIComponent(s.id)}`, { method: 'DELETE', body: '{}' })
    if (s.current) return onSignedOut('This session was revoked.')
    // Said after the list is read again: set before it, the count would replace it at once.
    await load('Session revoked.')
  }

  async function everywhere(): Promise<void> {
    const { revoked } = await json<{ revoked: number }>('/v1/admin/account/console-sessions', { method: 'DELETE', body: '{}' })
    onSignedOut(`Signed out everywhere (${revoked} session(s) ended).`)
  }

  main.append(
    h('h2', { text: 'Console sessions' }),
    h('p', { text: 'A session ends when it expires, when the personal access token it was signed in with is deleted, or when your role in a workspace changes or you are removed from one.' }),
    h('table', { attrs: { 'aria-label': 'Console sessions' } }, [
      h('thead', {}, [h('tr', {}, ['Started', 'Expires', 'Token', '', ''].map((t) => h('th', { attrs: { scope: 'col' }, text: t })))]),
      body,
    ]),
    status,
    h('p', {}, [h('button', { attrs: { type: 'button', id: 'sign-out-everywhere' }, text: 'Sign out everywhere', on: { click: () => void everywhere() } })]),
  )
  void load()
  return () => { alive = false }
}
