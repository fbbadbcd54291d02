/// <reference lib="dom" />
import { h } from '../../webchat/client/dom.js'
import { renderPayload } from '../../webchat/client/render.js'
import type { MessagePayload } from '../../webchat/shared/types.js'
import { call, json, qs } from './api.js'

interface Conversation { id: string; userId?: string; createdAt: string; lastMessageAt: string; messageCount: number; tags: Record<string, string> }
interface Transcript {
  conversation: Conversation
  messages: Array<{ id: string; seq: number; userId: string; direction: 'incoming' | 'outgoing'; createdAt: string; payload: Record<string, unknown> }>
  truncated: boolean
  users: Array<{ id: string; name?: string; pictureUrl?: string; isBot: boolean; createdAt: string }>
  logs: Array<{ timestamp: string; level: string; message: string }>
  llmCalls: LlmCall[]
}
interface LlmCall { timestamp: string; via: string; provider: string; model: string; inputTokens: number; outputTokens: number; cost: number; latencyMs: number; error?: string }

/** A turn's model calls (issue #29's trace): what each was for, the model, its tokens, cost and time, and its error. */
function modelCalls(calls: LlmCall[]): HTMLElement {
  const tokens = calls.reduce((n, c) => n + c.inputTokens + c.outputTokens, 0)
  const cost = calls.reduce((n, c) => n + c.cost, 0)
  return h('details', { class: 'model-calls' }, [
    h('summary', { text: `Model calls of this turn (${calls.length}: ${tokens} tokens, $${cost.toFixed(4)})` }),
    h('table', {}, [
      h('thead', {}, [h('tr', {}, ['For', 'Model', 'Tokens in / out', 'Cost', 'Time', 'Error'].map((t) => h('th', { attrs: { scope: 'col' }, text: t })))]),
      h('tbody', {}, calls.map((c) => h('tr', {}, [
        h('td', { text: c.via }), h('td', { text: `${c.provider}:${c.model}` }), h('td', { text: `${c.inputTokens} / ${c.outputTokens}` }),
        h('td', { text: `$${c.cost.toFixed(4)}` }), h('td', { text: `${c.latencyMs} ms` }), h('td', { text: c.error ?? '' }),
      ]))),
    ]),
  ])
}

/** The console shows transcripts read-only: choices and buttons of bot messages do nothing. */
const readOnly = { send: () => Promise.reject(new Error('read-only')) }

const when = (iso: string) => new Date(iso).toLocaleString()

function field(id: string, label: string, input: HTMLInputElement): HTMLElement {
  input.id = id
  return h('label', { attrs: { for: id } }, [label, input])
}

/** Saves a fetched export as a file (the call needs the console's header, so a plain link cannot download it). */
async function download(path: string): Promise<void> {
  const res = await call(path)
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export'
  const url = URL.createObjectURL(await res.blob())
  const a = h('a', { attrs: { href: url, download: name } })
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export function conversationsPage({ botId, main }: { botId: string; main: HTMLElement }): () => void {
  const base = `/v1/admin/bots/${encodeURIComponent(botId)}`
  const q = h('input', { attrs: { type: 'search', name: 'q', placeholder: 'words, a user id or a tag value' } })
  const from = h('input', { attrs: { type: 'date', name: 'from' } })
  const to = h('input', { attrs: { type: 'date', name: 'to' } })
  const failed = h('input', { attrs: { type: 'checkbox', name: 'failed', id: 'failed' } })
  const handoff = h('input', { attrs: { type: 'checkbox', name: 'handoff', id: 'handoff' } })
  const filters = () => ({
    q: q.value.trim(), from: from.value ? `${from.value}T00:00:00Z` : undefined, to: to.value ? `${to.value}T23:59:59.999Z` : undefined, failed: failed.checked, handoff: handoff.checked,
  })
  const list = h('ul', { class: 'conversations', attrs: { 'aria-label': 'Conversations' } })
  const status = h('p', { class: 'meta', attrs: { role: 'status' } })
  const more = h('button', { class: 'secondary', attrs: { type: 'button', hidden: '' }, text: 'Load more' })
  const detail = h('section', { class: 'panel', attrs: { 'aria-label': 'Conversation', id: 'transcript-panel' } }, [h('p', { class: 'meta', text: 'Choose a conversation.' })])
  let next: string | undefined
  let alive = true

  async function load(reset: boolean): Promise<void> {
    if (reset) { list.replaceChildren(); next = undefined }
    status.textContent = 'Loading…'
    const r = await json<{ conversations: Conversation[]; meta: { nextToken?: string } }>(`${base}/conversations${qs({ ...filters(), nextToken: next })}`)
    if (!alive) return
    for (const c of r.conversations) {
      const button = h('button', {
        attrs: { type: 'button', 'aria-pressed': 'false', 'data-conversation': c.id },
        on: { click: () => { for (const b of Array.from(list.querySelectorAll("button"))) b.setAttribute('aria-pressed', String(b === button)); void open(c.id) } },
      }, [
        h('strong', { text: c.userId ? `User ${c.userId}` : 'No user' }), h('br'),
        h('span', { class: 'meta', text: `${c.messageCount} messages · last ${when(c.lastMessageAt)}` }),
        ...Object.entries(c.tags).map(([k, v]) => h('span', { class: 'meta', text: ` · ${k}=${v}` })),
      ])
      list.append(h('li', {}, [button]))
    }
    next = r.meta.nextToken
    more.hidden = !next
    status.textContent = list.children.length === 0 ? 'No conversation matches.' : `${list.children.length} conversation(s)${next ? ' (more below)' : ''}`
  }

  async function open(id: string): Promise<void> {
    detail.replaceChildren(h('p', { class: 'meta', text: 'Loading…' }))
    const t = await json<Transcript>(`${base}/conversations/${encodeURIComponent(id)}/transcript`)
    if (!alive) return
    const names = new Map(t.users.map((u) => [u.id, u.name ?? u.id]))
    const times = t.messages.map((m) => Date.parse(m.createdAt))
    const items = t.messages.map((m, i) => {
      // The logs of a turn: those written after this incoming message and before the next incoming one.
      const start = times[i]!
      const nextIncoming = t.messages.findIndex((n, j) => j > i && n.direction === 'incoming')
      const end = nextIncoming === -1 ? Infinity : times[nextIncoming]!
      const inTurn = (timestamp: string) => { const at = Date.parse(timestamp); return at >= start && at < end }
      const logs = m.direction === 'incoming' ? t.logs.filter((l) => inTurn(l.timestamp)) : []
      const calls = m.direction === 'incoming' ? t.llmCalls.filter((c) => inTurn(c.timestamp)) : []
      return h('li', { class: m.direction, attrs: { 'data-message': m.id } }, [
        h('div', { class: 'meta', text: `${m.direction === 'incoming' ? names.get(m.userId) ?? m.userId : 'Bot'} · ${when(m.createdAt)}` }),
        renderPayload(m.payload as unknown as MessagePayload, readOnly),
        calls.length > 0 && modelCalls(calls),
        logs.length > 0 && h('details', {}, [
          h('summary', { text: `Bot logs of this turn (${logs.length})` }),
          ...logs.map((l) => h('pre', { class: `log ${l.level}`, text: `${l.timestamp} ${l.level}: ${l.message}` })),
        ]),
      ])
    })
    const user = t.users.find((u) => u.id === t.conversation.userId)
    const exp = (format: string) => `${base}/export${qs({ format, conversationId: id })}`
    detail.replaceChildren(
      h('h2', { text: `Conversation ${id}` }),
      h('p', { class: 'meta', text: `Started ${when(t.conversation.createdAt)} · ${t.conversation.messageCount} messages` }),
      h('h3', { text: 'User' }),
      user
        ? h('dl', {}, [h('dt', { text: 'Id' }), h('dd', { text: user.id }), h('dt', { text: 'Name' }), h('dd', { text: user.name ?? '—' }),
          h('dt', { text: 'First seen' }), h('dd', { text: when(user.createdAt) })])
        : h('p', { text: 'No user' }),
      h('p', {}, [
        h('button', { attrs: { type: 'button', 'data-export': 'conversation-json' }, text: 'Export JSON', on: { click: () => void download(exp('json')) } }), ' ',
        h('button', { attrs: { type: 'button', 'data-export': 'conversation-csv' }, text: 'Export CSV', on: { click: () => void download(exp('csv')) } }),
      ]),
      h('h3', { text: 'Transcript' }),
      h('ol', { class: 'transcript' }, items),
    )
    if (t.truncated) detail.append(h('p', { class: 'meta', text: 'The first 1,000 messages are shown; export the conversation for all of them.' }))
  }

  const form = h('form', { class: 'filters', attrs: { role: 'search' }, on: { submit: (e) => { e.preventDefault(); void load(true) } } }, [
    field('q', 'Search', q), field('from', 'From', from), field('to', 'To', to),
    h('label', { class: 'inline', attrs: { for: 'failed' } }, [failed, 'Has failed turns']),
    h('label', { class: 'inline', attrs: { for: 'handoff' } }, [handoff, 'Handed to a person']),
    h('button', { attrs: { type: 'submit' }, text: 'Search' }),
    h('button', { class: 'secondary', attrs: { type: 'button', 'data-export': 'range-csv' }, text: 'Export results (CSV)', on: { click: () => void download(`${base}/export${qs({ format: 'csv', ...filters() })}`) } }),
    h('button', { class: 'secondary', attrs: { type: 'button', 'data-export': 'range-json' }, text: 'Export results (JSON)', on: { click: () => void download(`${base}/export${qs({ format: 'json', ...filters() })}`) } }),
  ])
  more.addEventListener('click', () => void load(false))
  main.append(h('h2', { text: 'Conversations' }), form, h('div', { class: 'split' }, [h('div', {}, [status, list, more]), detail]))
  void load(true)
  return () => { alive = false }
}
