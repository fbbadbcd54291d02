/// <reference lib="dom" />
/**
 * The Parley console: sign-in, conversations, analytics, logs and the handoff inbox. Plain DOM: every
 * string from the server reaches the page as text (h() in ../../webchat/client/dom.ts; no innerHTML anywhere).
 */
import { h } from '../../webchat/client/dom.js'
import { ApiError, json, setWorkspace } from './api.js'
import { analyticsPage } from './analytics.js'
import { conversationsPage } from './conversations.js'
import { inboxPage } from './inbox.js'
import { logsPage } from './logs.js'
import { sessionsPage } from './sessions.js'

interface Account { id: string; email: string; displayName: string }
interface Workspace { id: string; name: string }
interface Bot { id: string; name: string }

const root = document.getElementById('app')!
const state: { account?: Account; workspaces: Workspace[]; bots: Bot[]; workspace?: string; bot?: string; stop?: () => void } = { workspaces: [], bots: [] }

const TABS = [
  ['conversations', 'Conversations'],
  ['analytics', 'Analytics'],
  ['logs', 'Logs'],
  ['inbox', 'Inbox'],
  ['sessions', 'Sessions'],
] as const
type Tab = (typeof TABS)[number][0]

function currentTab(): Tab {
  const t = /^#\/(\w+)/.exec(location.hash)?.[1]
  return (TABS.find(([id]) => id === t)?.[0]) ?? 'conversations'
}

function replace(...children: Node[]): void {
  root.replaceChildren(...children)
}

function signInPage(message?: string): void {
  const input = h('input', { attrs: { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: '', size: '50' } })
  const error = h('p', { class: 'error-box', attrs: { role: 'alert' }, text: message ?? '' })
  const form = h('form', {
    on: {
      submit: (e) => {
        e.preventDefault()
        void signIn({ token: input.value.trim() }).catch((err: unknown) => { error.textContent = err instanceof Error ? err.message : String(err) })
      },
    },
  }, [
    h('p', {}, [h('label', { attrs: { for: 'token' }, text: 'Personal access token' })]),
    h('p', {}, [input]),
    h('p', {}, [h('button', { attrs: { type: 'submit' }, text: 'Sign in' })]),
  ])
  replace(h('main', {}, [
    h('h1', { text: 'Sign in to the Parley console' }),
    h('p', { text: 'Use a personal access token (the first-start banner prints one; `parley tokens create` makes more), or open the one-time link that `parley console` prints.' }),
    form, error,
  ]))
  input.focus()
}

async function signIn(body: { token: string } | { link: string }): Promise<void> {
  const r = await json<{ account: Account }>('/console/session', { method: 'POST', body: JSON.stringify(body) })
  state.account = r.account
  await start()
}

async function signOut(): Promise<void> {
  state.stop?.()
  await json('/console/session', { method: 'DELETE' }).catch(() => undefined)
  state.account = undefined
  signInPage('You are signed out.')
}

async function loadBots(): Promise<void> {
  setWorkspace(state.workspace)
  state.bots = state.workspace ? (await json<{ bots: Bot[] }>('/v1/admin/bots')).bots : []
  if (!state.bots.some((b) => b.id === state.bot)) state.bot = state.bots[0]?.id
}

async function start(): Promise<void> {
  const ws = await json<{ workspaces: Workspace[] }>('/v1/admin/workspaces')
  state.workspaces = ws.workspaces
  state.workspace = state.workspaces.find((w) => w.id === localStorage.getItem('parley.console.workspace'))?.id ?? state.workspaces[0]?.id
  await loadBots()
  render()
}

function picker<T extends { id: string; name: string }>(id: string, label: string, items: T[], value: string | undefined, onChange: (v: string) => void): HTMLElement {
  const select = h('select', { attrs: { id }, on: { change: () => onChange(select.value) } },
    items.map((i) => h('option', { attrs: { value: i.id }, text: `${i.name} (${i.id.slice(0, 8)})` })))
  if (value) select.value = value
  return h('label', { attrs: { for: id } }, [label, select])
}

function render(): void {
  state.stop?.()
  state.stop = undefined
  const tab = currentTab()
  const header = h('header', { class: 'top' }, [
    h('h1', { text: 'Parley console' }),
    picker('workspace', 'Workspace', state.workspaces, state.workspace, (v) => {
      state.workspace = v
      localStorage.setItem('parley.console.workspace', v)
      void loadBots().then(render)
    }),
    picker('bot', 'Bot', state.bots, state.bot, (v) => { state.bot = v; render() }),
    h('span', { class: 'who', text: `Signed in as ${state.account?.email ?? ''}` }),
    h('button', { class: 'secondary', attrs: { type: 'button' }, text: 'Sign out', on: { click: () => void signOut() } }),
  ])
  const nav = h('nav', { class: 'tabs', attrs: { 'aria-label': 'Console sections' } },
    TABS.map(([id, label]) => h('a', { attrs: { href: `#/${id}`, ...(id === tab && { 'aria-current': 'page' }) }, text: label })))
  const main = h('main', { attrs: { id: 'main' } })
  replace(header, nav, main)
  if (tab === 'sessions') {
    // The account's, not a bot's.
    state.stop = sessionsPage({ main, onSignedOut: (message) => { state.stop?.(); state.account = undefined; signInPage(message) } })
    return
  }
  if (!state.bot) {
    main.append(h('p', { text: 'This workspace has no bot yet.' }))
    return
  }
  const ctx = { botId: state.bot, main }
  if (tab === 'conversations') state.stop = conversationsPage(ctx)
  else if (tab === 'analytics') state.stop = analyticsPage(ctx)
  else if (tab === 'logs') state.stop = logsPage(ctx)
  else state.stop = inboxPage({ ...ctx, accountId: state.account!.id })
}

window.addEventListener('hashchange', () => { if (state.account) render() })
window.addEventListener('unhandledrejection', (e) => {
  if (e.reason instanceof ApiError && e.reason.status === 401) signInPage('Your session has expired: sign in again.')
})

async function boot(): Promise<void> {
  const link = /(?:^#|&)link=([^&]+)/.exec(location.hash)?.[1]
  if (link) {
    history.replaceState(null, '', location.pathname) // the secret leaves the address bar at once
    try {
      await signIn({ link: decodeURIComponent(link) })
    } catch (err) {
      signInPage(err instanceof Error ? err.message : String(err))
    }
    return
  }
  try {
    state.account = (await json<{ account: Account }>('/console/session')).account
  } catch {
    signInPage()
    return
  }
  await start()
}

void boot()
