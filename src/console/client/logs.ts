/// <reference lib="dom" />
import { h } from '../../webchat/client/dom.js'
import { json, qs } from './api.js'

interface Log { timestamp: string; level: string; message: string; conversationId?: string; botId?: string }

/** The built-in integrations: every other entry of bot.integrations is an installed integration with logs of its own. */
const BUILT_IN = new Set(['chat', 'webhook'])

/**
 * The bot's logs (getBotLogs), or those of an integration installed on it (getIntegrationLogs: what Parley sent it and
 * what failed, this bot's lines), with filters, and a live tail that asks for what came since the last line.
 */
export function logsPage({ botId, main }: { botId: string; main: HTMLElement }): () => void {
  const source = h('select', { attrs: { id: 'log-source' } }, [h('option', { attrs: { value: '' }, text: 'this bot' })])
  const level = h('select', { attrs: { id: 'level' } }, ['', 'debug', 'info', 'warn', 'error'].map((l) => h('option', { attrs: { value: l }, text: l || 'any' })))
  const conversation = h('input', { attrs: { id: 'log-conversation', type: 'text', size: '30' } })
  const since = h('input', { attrs: { id: 'since', type: 'datetime-local' } })
  const tail = h('input', { attrs: { id: 'tail', type: 'checkbox' } })
  const list = h('div', { attrs: { id: 'logs', role: 'log', 'aria-live': 'polite', 'aria-label': 'Logs' } })
  const status = h('p', { class: 'meta', attrs: { role: 'status' } })
  const seen = new Set<string>()
  let last: string | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let alive = true

  async function fetchFrom(timeStart: string | undefined): Promise<number> {
    let next: string | undefined
    let added = 0
    let pages = 0
    do {
      const path = source.value ? `/v1/admin/integrations/${encodeURIComponent(source.value)}/logs` : `/v1/admin/bots/${encodeURIComponent(botId)}/logs`
      const r = await json<{ logs: Log[]; nextToken?: string }>(`${path}${qs({
        timeStart, level: level.value, conversationId: conversation.value.trim(), nextToken: next,
      })}`)
      if (!alive) return added
      for (const l of r.logs) {
        if (l.botId !== undefined && l.botId !== botId) continue // an integration's lines about other bots
        const key = `${l.timestamp}\u0000${l.level}\u0000${l.conversationId ?? ''}\u0000${l.message}`
        if (seen.has(key)) continue
        seen.add(key)
        last = l.timestamp
        added++
        list.append(h('pre', { class: `log ${l.level}` }, [`${l.timestamp} ${l.level}${l.conversationId ? ` [${l.conversationId}]` : ''}: ${l.message}`]))
      }
      next = r.nextToken
    } while (next && ++pages < 20)
    return added
  }

  async function load(): Promise<void> {
    list.replaceChildren()
    seen.clear()
    last = undefined
    const start = since.value ? new Date(since.value).toISOString() : new Date(Date.now() - 86_400_000).toISOString()
    const n = await fetchFrom(start)
    status.textContent = `${n} log line(s) since ${start}`
    schedule()
  }

  function schedule(): void {
    if (timer) clearTimeout(timer)
    if (!alive || !tail.checked) return
    timer = setTimeout(() => {
      void fetchFrom(last ?? new Date(Date.now() - 60_000).toISOString()).then((n) => {
        if (n > 0) status.textContent = `${seen.size} log line(s), live`
        schedule()
      }).catch(() => schedule())
    }, 2000)
  }

  tail.addEventListener('change', schedule)
  source.addEventListener('change', () => void load())
  // The integrations installed on the bot (getBot; a role without bots.read keeps the bot's own logs only)
  void json<{ bot: { integrations: Record<string, { id: string; title?: string }> } }>(`/v1/admin/bots/${encodeURIComponent(botId)}`).then((r) => {
    for (const [alias, i] of Object.entries(r.bot.integrations)) {
      if (!BUILT_IN.has(alias)) source.append(h('option', { attrs: { value: i.id }, text: `integration ${alias}` }))
    }
  }, () => {})
  const form = h('form', { class: 'filters', on: { submit: (e) => { e.preventDefault(); void load() } } }, [
    h('label', { attrs: { for: 'log-source' } }, ['Source', source]),
    h('label', { attrs: { for: 'level' } }, ['Level', level]),
    h('label', { attrs: { for: 'log-conversation' } }, ['Conversation id', conversation]),
    h('label', { attrs: { for: 'since' } }, ['Since (default: 24 h ago)', since]),
    h('label', { class: 'inline', attrs: { for: 'tail' } }, [tail, 'Live tail']),
    h('button', { attrs: { type: 'submit' }, text: 'Show' }),
  ])
  main.append(h('h2', { text: 'Logs' }), form, status, list)
  void load()
  return () => { alive = false; if (timer) clearTimeout(timer) }
}
