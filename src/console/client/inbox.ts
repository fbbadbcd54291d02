/// <reference lib="dom" />
/**
 * The handoff inbox: the bot's waiting and active handoffs (who waits longest first, with the wait and the reason),
 * claim or assign one, its live transcript (listenBotConversation: the conversation's stream, so a user's message
 * appears at once), reply with text, quick-reply choices, an image or a file (createBotHandoffFileUpload, then an
 * image/file reply), internal notes (stored with the handoff, never sent to the user), and "return to the bot".
 * Every string from the server reaches the page as text; payloads go through the webchat's renderers.
 */
import { h } from '../../webchat/client/dom.js'
import { renderPayload } from '../../webchat/client/render.js'
import { agentOf } from '../../webchat/shared/handoff.js'
import { ResilientStream } from '../../webchat/shared/sse.js'
import type { MessagePayload } from '../../webchat/shared/types.js'
import { can, isRole } from '../../domain/permissions.js'
import { json, qs, workspaceId } from './api.js'

interface Handoff {
  id: string
  conversationId: string
  userId: string
  status: 'waiting' | 'active' | 'ended'
  reason?: string
  requestedAt: string
  claimedBy?: { memberId: string; name: string }
  claimedAt?: string
  endedAt?: string
  notes: { memberId: string; text: string; createdAt: string }[]
}
interface Member { id: string; email: string; displayName: string; role: string }
interface ShownMessage { id: string; seq?: number; userId: string; isBot: boolean; createdAt: string; payload: Record<string, unknown>; metadata?: Record<string, unknown> }

/** The inbox shows transcripts read-only: choices and buttons in them do nothing. */
const readOnly = { send: () => Promise.reject(new Error('read-only')) }
const POLL_MS = 3000

const when = (iso: string) => new Date(iso).toLocaleString()

/** "4 min", "1 h 5 min": how long since `iso`. */
export function waitText(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000))
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min`
  const hours = Math.floor(m / 60)
  return hours < 48 ? `${hours} h ${m % 60} min` : `${Math.floor(hours / 24)} days`
}

export function inboxPage({ botId, main, accountId }: { botId: string; main: HTMLElement; accountId: string }): () => void {
  const base = `/v1/admin/bots/${encodeURIComponent(botId)}`
  let alive = true
  let role: string | undefined
  let members: Member[] = []
  let current: { handoff: Handoff; stop: () => void; render: (h: Handoff) => void } | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let listKey = ''
  let opening = 0

  const waitingList = h('ul', { class: 'conversations', attrs: { 'aria-label': 'Waiting conversations', id: 'inbox-waiting' } })
  const activeList = h('ul', { class: 'conversations', attrs: { 'aria-label': 'Conversations being answered', id: 'inbox-active' } })
  const listStatus = h('p', { class: 'meta', attrs: { role: 'status' } })
  const detail = h('section', { class: 'panel', attrs: { 'aria-label': 'Handoff', id: 'handoff-panel' } }, [h('p', { class: 'meta', text: 'Choose a conversation.' })])

  const handoffPath = (conversationId: string, tail = '') => `${base}/handoffs/${encodeURIComponent(conversationId)}${tail}`
  const post = <T>(path: string, body: unknown) => json<T>(path, { method: 'POST', body: JSON.stringify(body) })

  function item(x: Handoff): HTMLElement {
    const button = h('button', {
      attrs: { type: 'button', 'aria-pressed': String(current?.handoff.conversationId === x.conversationId), 'data-conversation': x.conversationId },
      on: { click: () => void open(x).catch((err: unknown) => detail.replaceChildren(h('p', { class: 'error-box', attrs: { role: 'alert' }, text: err instanceof Error ? err.message : String(err) }))) },
    }, [
      h('strong', { text: `User ${x.userId}` }), h('br'),
      h('span', { class: 'meta' }, [
        x.status === 'waiting' ? 'Waiting for ' : 'Requested ',
        h('span', { attrs: { 'data-wait': x.requestedAt }, text: waitText(x.requestedAt) }),
        x.status === 'waiting' ? '' : ' ago',
        x.claimedBy ? ` · ${x.claimedBy.memberId === accountId ? 'you' : x.claimedBy.name}` : '',
      ]),
      x.reason !== undefined && h('span', { class: 'meta reason', text: ` · ${x.reason}` }),
    ])
    return h('li', {}, [button])
  }

  async function loadLists(): Promise<void> {
    const [waiting, active] = await Promise.all([
      json<{ handoffs: Handoff[] }>(`${base}/handoffs${qs({ status: 'waiting' })}`),
      json<{ handoffs: Handoff[] }>(`${base}/handoffs${qs({ status: 'active' })}`),
    ])
    if (!alive) return
    const key = JSON.stringify([waiting.handoffs, active.handoffs].map((l) => l.map((x) => [x.id, x.status, x.claimedBy?.memberId])))
    if (key !== listKey) {
      // Replaced only when something changed: the list keeps focus and scroll between polls.
      listKey = key
      const none = (text: string) => [h('li', { class: 'meta', text })]
      waitingList.replaceChildren(...(waiting.handoffs.length > 0 ? waiting.handoffs.map(item) : none('No one is waiting.')))
      activeList.replaceChildren(...(active.handoffs.length > 0 ? active.handoffs.map(item) : none('None.')))
    }
    for (const el of Array.from(main.querySelectorAll<HTMLElement>('[data-wait]'))) el.textContent = waitText(el.dataset.wait!)
    listStatus.textContent = `${waiting.handoffs.length} waiting · ${active.handoffs.length} being answered`
    const listed = current && [...waiting.handoffs, ...active.handoffs].find((x) => x.id === current!.handoff.id)
    if (current && listed) current.render(listed)
    else if (current && current.handoff.status !== 'ended') await refresh()
  }

  async function refresh(): Promise<void> {
    if (!current) return
    const { handoff } = await json<{ handoff: Handoff }>(handoffPath(current.handoff.conversationId))
    if (alive && current && handoff.conversationId === current.handoff.conversationId) current.render(handoff)
  }

  function schedule(): void {
    if (timer) clearTimeout(timer)
    if (!alive) return
    timer = setTimeout(() => void loadLists().catch(() => undefined).finally(schedule), POLL_MS)
  }

  async function open(x: Handoff): Promise<void> {
    current?.stop()
    current = undefined
    const ticket = ++opening
    for (const b of Array.from(main.querySelectorAll<HTMLButtonElement>('ul.conversations button'))) b.setAttribute('aria-pressed', String(b.dataset.conversation === x.conversationId))
    detail.replaceChildren(h('p', { class: 'meta', text: 'Loading…' }))
    const t = await json<{ messages: Array<{ id: string; seq: number; userId: string; direction: string; createdAt: string; payload: Record<string, unknown>; metadata?: Record<string, unknown> }>; users: Array<{ id: string; name?: string }> }>(
      `${base}/conversations/${encodeURIComponent(x.conversationId)}/transcript`)
    if (!alive || ticket !== opening) return // the page closed, or another conversation was chosen meanwhile
    const names = new Map(t.users.map((u) => [u.id, u.name ?? u.id]))
    const seen = new Set<string>()
    const transcript = h('ol', { class: 'transcript', attrs: { 'aria-label': 'Transcript', 'aria-live': 'polite', id: 'handoff-transcript' } })

    const addMessage = (m: ShownMessage) => {
      if (seen.has(m.id)) return
      seen.add(m.id)
      const agent = agentOf({ metadata: m.metadata })
      if (agent?.event) {
        transcript.append(h('li', { class: 'system', attrs: { 'data-message': m.id, 'data-handoff': agent.event }, text: typeof m.payload.text === 'string' ? m.payload.text : `${agent.name} ${agent.event}` }))
      } else {
        const who = agent ? `${agent.name} (agent)` : m.isBot ? 'Bot' : names.get(m.userId) ?? `User ${m.userId}`
        transcript.append(h('li', { class: m.isBot ? 'outgoing' : 'incoming', attrs: { 'data-message': m.id } }, [
          h('div', { class: 'meta', text: `${who} · ${when(m.createdAt)}` }),
          renderPayload(m.payload as unknown as MessagePayload, readOnly),
        ]))
      }
      transcript.lastElementChild?.scrollIntoView?.({ block: 'nearest' })
    }
    for (const m of t.messages) addMessage({ ...m, isBot: m.direction === 'outgoing' })

    const liveStatus = h('span', { class: 'meta', attrs: { id: 'live-status' }, text: 'Connecting…' })
    const stream = new ResilientStream({
      url: () => `${base}/conversations/${encodeURIComponent(x.conversationId)}/listen`,
      headers: () => ({ 'x-parley-console': '1', ...(workspaceId && { 'x-workspace-id': workspaceId }) }),
      onFrame: (frame) => {
        let parsed: { type?: string; data?: Record<string, unknown> }
        try { parsed = JSON.parse(frame.data) as typeof parsed } catch { return }
        const d = parsed.data
        if (!d) return
        if (parsed.type === 'message_created' && typeof d.id === 'string') {
          addMessage({
            id: d.id, userId: String(d.userId ?? ''), isBot: d.isBot === true, createdAt: String(d.createdAt ?? new Date().toISOString()),
            payload: (d.payload ?? {}) as Record<string, unknown>, ...(d.metadata !== undefined && { metadata: d.metadata as Record<string, unknown> }),
          })
        } else if (parsed.type === 'event_created') {
          // handoff_started / handoff_ended, or another agent's doing: read the handoff again.
          void refresh().catch(() => undefined)
        }
      },
      onStatus: (s) => { liveStatus.textContent = s === 'open' ? 'Live' : s === 'stopped' ? 'Not live' : 'Connecting…' },
    })
    const last = t.messages[t.messages.length - 1]
    if (last) stream.lastEventId = String(last.seq)
    stream.start()

    // ---- the panel ----
    const heading = h('h2', { text: `Conversation ${x.conversationId}` })
    const summary = h('p', { class: 'meta', attrs: { id: 'handoff-summary' } })
    const feedback = h('p', { class: 'meta', attrs: { role: 'status', id: 'handoff-feedback' } })
    const fail = (err: unknown) => { feedback.textContent = err instanceof Error ? err.message : String(err) }
    const act = (fn: () => Promise<unknown>) => async () => {
      feedback.textContent = ''
      try { await fn(); await refresh(); await loadLists() } catch (err) { fail(err) }
    }

    const claim = h('button', { attrs: { type: 'button', id: 'claim' }, text: 'Claim', on: { click: () => void act(() => post(handoffPath(x.conversationId, '/claim'), {}))() } })
    const assignees = members.filter((m) => isRole(m.role) && can(m.role, 'handoffs.write'))
    const assignSelect = h('select', { attrs: { id: 'assign-to' } }, assignees.map((m) => h('option', { attrs: { value: m.id }, text: `${m.displayName} (${m.email})` })))
    const assign = h('span', { class: 'assign' }, [
      h('label', { attrs: { for: 'assign-to' } }, ['Assign to ', assignSelect]), ' ',
      h('button', { class: 'secondary', attrs: { type: 'button', id: 'assign' }, text: 'Assign', on: { click: () => void act(() => post(handoffPath(x.conversationId, '/claim'), { memberId: assignSelect.value }))() } }),
    ])
    const end = h('button', { class: 'secondary', attrs: { type: 'button', id: 'end-handoff' }, text: 'Return to the bot', on: { click: () => void act(() => post(handoffPath(x.conversationId, '/end'), {}))() } })

    // Reply: text, optional quick replies (one per line), or an attachment.
    const replyText = h('textarea', { attrs: { id: 'reply-text', rows: '3', cols: '50' } })
    const choices = h('textarea', { attrs: { id: 'reply-choices', rows: '2', cols: '30', 'aria-describedby': 'reply-choices-hint' } })
    const attachment = h('input', { attrs: { id: 'reply-file', type: 'file' } })
    const replyForm = h('form', {
      class: 'composer', attrs: { 'aria-label': 'Reply to the user' },
      on: {
        submit: (e) => {
          e.preventDefault()
          void act(async () => {
            const text = replyText.value.trim()
            const options = choices.value.split('\n').map((l) => l.trim()).filter(Boolean)
            const file = attachment.files?.[0]
            if (!text && !file) throw new Error('Write a reply or attach a file.')
            if (file) await sendFile(file)
            if (text) {
              await post(handoffPath(x.conversationId, '/messages'), options.length > 0
                ? { type: 'choice', payload: { text, options: options.map((o) => ({ label: o, value: o })) } }
                : { type: 'text', payload: { text } })
            }
            replyText.value = ''
            choices.value = ''
            attachment.value = ''
          })()
        },
      },
    }, [
      h('h3', { text: 'Reply to the user' }),
      h('p', {}, [h('label', { attrs: { for: 'reply-text' }, text: 'Reply' }), h('br'), replyText]),
      h('p', {}, [
        h('label', { attrs: { for: 'reply-choices' }, text: 'Quick replies (optional)' }), ' ',
        h('span', { class: 'meta', attrs: { id: 'reply-choices-hint' }, text: 'one per line: the user answers with a tap' }), h('br'), choices,
      ]),
      h('p', {}, [h('label', { attrs: { for: 'reply-file' }, text: 'Attach an image or a file' }), ' ', attachment]),
      h('p', {}, [h('button', { attrs: { type: 'submit', id: 'send-reply' }, text: 'Send' })]),
    ])

    async function sendFile(file: File): Promise<void> {
      const contentType = file.type || 'application/octet-stream'
      const { file: target } = await post<{ file: { uploadUrl: string; url: string } }>(handoffPath(x.conversationId, '/files'), { name: file.name.slice(0, 200) || 'file', contentType, size: file.size })
      const put = await fetch(target.uploadUrl, { method: 'PUT', headers: { 'content-type': contentType }, body: file })
      if (!put.ok) throw new Error(`${file.name} was not uploaded (HTTP ${put.status})`)
      await post(handoffPath(x.conversationId, '/messages'), contentType.startsWith('image/')
        ? { type: 'image', payload: { imageUrl: target.url } }
        : { type: 'file', payload: { fileUrl: target.url, title: file.name } })
    }

    // Internal notes: agents only.
    const notes = h('ul', { class: 'notes', attrs: { 'aria-label': 'Internal notes', id: 'handoff-notes' } })
    const noteText = h('textarea', { attrs: { id: 'note-text', rows: '2', cols: '50' } })
    const noteForm = h('form', {
      class: 'composer note', attrs: { 'aria-label': 'Internal note' },
      on: {
        submit: (e) => {
          e.preventDefault()
          void act(async () => {
            if (!noteText.value.trim()) throw new Error('Write the note first.')
            await post(handoffPath(x.conversationId, '/messages'), { note: noteText.value })
            noteText.value = ''
          })()
        },
      },
    }, [
      h('h3', { text: 'Internal notes' }),
      h('p', { class: 'meta', text: 'Seen by the workspace\'s members only: never sent to the user.' }),
      notes,
      h('p', {}, [h('label', { attrs: { for: 'note-text' }, text: 'Note' }), h('br'), noteText]),
      h('p', {}, [h('button', { class: 'secondary', attrs: { type: 'submit', id: 'add-note' }, text: 'Add note' })]),
    ])

    const actions = h('p', { class: 'actions' }, [claim, ' ', assign, ' ', end])
    const render = (hx: Handoff) => {
      if (!current || current.handoff.conversationId !== hx.conversationId) return
      current.handoff = hx
      const mine = hx.claimedBy?.memberId === accountId
      summary.textContent = [
        hx.status === 'waiting' ? `Waiting for ${waitText(hx.requestedAt)}` : hx.status === 'active' ? `Answered by ${mine ? 'you' : hx.claimedBy?.name ?? '—'}` : `Returned to the bot ${hx.endedAt ? when(hx.endedAt) : ''}`,
        `requested ${when(hx.requestedAt)}`,
        hx.reason !== undefined ? `reason: ${hx.reason}` : 'no reason given',
      ].join(' · ')
      // A held handoff cannot be claimed or assigned by anyone else (409): only while it waits.
      claim.hidden = hx.status !== 'waiting'
      assign.hidden = hx.status !== 'waiting' || !(role !== undefined && isRole(role) && can(role, 'handoffs.assign')) || assignees.length === 0
      end.hidden = hx.status === 'ended'
      replyForm.hidden = hx.status === 'ended' || Boolean(hx.claimedBy && !mine)
      const key = JSON.stringify(hx.notes)
      if (notes.dataset.key !== key) {
        notes.dataset.key = key
        const name = (id: string) => members.find((m) => m.id === id)?.displayName ?? id
        notes.replaceChildren(...(hx.notes.length === 0
          ? [h('li', { class: 'meta', text: 'No note yet.' })]
          : hx.notes.map((n) => h('li', { attrs: { 'data-note': n.createdAt } }, [h('div', { class: 'meta', text: `${name(n.memberId)} · ${when(n.createdAt)}` }), h('p', { text: n.text })]))))
      }
    }
    current = { handoff: x, render, stop: () => void stream.stop() }
    detail.replaceChildren(heading, summary, h('p', { class: 'meta' }, ['Transcript: ', liveStatus]), actions, feedback, transcript, replyForm, noteForm)
    render(x)
  }

  main.append(
    h('h2', { text: 'Inbox' }),
    h('div', { class: 'split' }, [
      h('div', {}, [listStatus, h('h3', { text: 'Waiting' }), waitingList, h('h3', { text: 'Being answered' }), activeList]),
      detail,
    ]),
  )

  void (async () => {
    const [me, list] = await Promise.all([
      json<Member>('/v1/admin/workspace-members/me'),
      json<{ members: Member[] }>(`/v1/admin/workspace-members${qs({ pageSize: 100 })}`).catch(() => ({ members: [] as Member[] })),
    ])
    role = me.role
    members = list.members
    await loadLists()
  })().catch((err: unknown) => { listStatus.textContent = err instanceof Error ? err.message : String(err) }).finally(schedule)

  return () => {
    alive = false
    if (timer) clearTimeout(timer)
    current?.stop()
    current = undefined
  }
}
