/// <reference lib="dom" />
import { readReplyMetadata, replyMetadata } from '../shared/answers.js'
import { agentOf, initialsOf } from '../shared/handoff.js'
import { safeUrl } from '../shared/payload.js'
import { ChatApi, ChatApiError } from '../shared/chat-api.js'
import { describePayload } from '../shared/payload.js'
import { ResilientStream, type StreamStatus } from '../shared/sse.js'
import { Timeline } from '../shared/timeline.js'
import type { Message, MessagePayload, Signal, SignalMessage } from '../shared/types.js'
import { announcer } from './announce.js'
import { applyAnswers } from './answers.js'
import { addEmojiPicker } from './emoji.js'
import { h, srOnly } from './dom.js'
import { OlderHistory } from './history.js'
import { applyWebchatConfig, pageWebchatConfig } from './identity.js'
import { TypingIndicator } from './typing.js'
import { StreamingReplies } from './streaming.js'
import { citationsOf, renderSources, withoutSourcesLine } from './sources.js'
import { feedbackButtons, feedbackOf } from './feedback.js'
import { attachUpload } from './upload.js'
import { renderPayload } from './render.js'
import { addRestartButton } from './restart.js'

/**
 * The webchat page: talks only to the public Chat API of one chat integration, as one end user whose key is
 * kept in localStorage. The page shell (header, log, composer) is server-rendered; this script brings it to life.
 */

interface Saved {
  userKey: string
  userId: string
  conversationId?: string
}

type Shown = SignalMessage

const byId = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id)
  if (!el) throw new Error(`webchat: #${id} is missing from the page`)
  return el as T
}

/** localStorage when the browser allows it (a third-party iframe may not), else memory for this visit. */
function storage(): { get(key: string): string | null; set(key: string, value: string): void; remove(key: string): void } {
  const memory = new Map<string, string>()
  try {
    const ls = window.localStorage
    const probe = '__parley_probe__'
    ls.setItem(probe, '1')
    ls.removeItem(probe)
    return { get: (k) => ls.getItem(k), set: (k, v) => ls.setItem(k, v), remove: (k) => ls.removeItem(k) }
  } catch {
    return { get: (k) => memory.get(k) ?? null, set: (k, v) => void memory.set(k, v), remove: (k) => void memory.delete(k) }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function timeOf(iso: string): string {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
}

function start(): void {
  const root = byId<HTMLElement>('parley-webchat')
  const log = byId<HTMLElement>('pw-log')
  const statusEl = byId<HTMLElement>('pw-status')
  const errorEl = byId<HTMLElement>('pw-error')
  const form = byId<HTMLFormElement>('pw-composer')
  const input = byId<HTMLTextAreaElement>('pw-input')
  const closeButton = byId<HTMLButtonElement>('pw-close')

  const webhookId = root.dataset.webhookId ?? ''
  const apiBase = new URL(root.dataset.api ?? `../${encodeURIComponent(webhookId)}`, window.location.href).href.replace(/\/+$/, '')
  const params = new URLSearchParams(window.location.search)
  const embedded = params.get('embed') === '1' && window.parent !== window
  const settings = pageWebchatConfig(root, params)
  applyWebchatConfig(settings)
  const typing = new TypingIndicator(log, () => settings.botName ?? 'The bot')
  const streaming = new StreamingReplies(log, () => following && toBottom())
  if (embedded) {
    closeButton.hidden = false
    const close = () => window.parent.postMessage({ type: 'parley:close' }, '*')
    closeButton.addEventListener('click', close)
    document.addEventListener('keydown', (event) => {
      // Not while a dialog of the page (the image lightbox) is open: Escape closes that first.
      if (event.key === 'Escape' && !event.defaultPrevented && !document.querySelector('dialog[open]')) close()
    })
  }

  const store = storage()
  const storageKey = `parley.webchat.${webhookId}`
  const api = new ChatApi(apiBase)
  const timeline = new Timeline<Shown>()
  const elements = new Map<string, HTMLElement>()
  let saved: Saved | undefined
  let ready: Promise<void> = Promise.resolve()

  const setState = (state: string) => {
    root.dataset.state = state
  }
  const setStatus = (text: string, connection: string) => {
    if (statusEl.textContent !== text) statusEl.textContent = text
    root.dataset.connection = connection
  }
  const showError = (text: string | undefined) => {
    errorEl.textContent = text ?? ''
    errorEl.hidden = !text
  }

  const load = (): Saved | undefined => {
    try {
      const value = JSON.parse(store.get(storageKey) ?? 'null') as Partial<Saved> | null
      return value && typeof value.userKey === 'string' && typeof value.userId === 'string'
        ? { userKey: value.userKey, userId: value.userId, ...(typeof value.conversationId === 'string' && { conversationId: value.conversationId }) }
        : undefined
    } catch {
      return undefined
    }
  }
  const save = () => {
    if (saved) store.set(storageKey, JSON.stringify(saved))
  }

  // ---- the message log ----

  const nearBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 80
  /** Whether the log follows new messages: true until the reader scrolls up, true again at the bottom. */
  let following = true
  const toBottom = () => {
    log.scrollTop = log.scrollHeight
  }
  log.addEventListener('scroll', () => {
    following = nearBottom()
  }, { passive: true })
  // Images and media grow messages after they are shown: keep the bottom in view while following.
  log.addEventListener('load', () => {
    if (following) toBottom()
  }, true)

  const sendPayload = async (payload: MessagePayload, metadata?: Record<string, unknown>): Promise<void> => {
    await ready
    const conversationId = saved?.conversationId
    if (!conversationId) throw new Error('not connected yet')
    const { message } = await api.createMessage(conversationId, payload, metadata)
    show({ ...message, isBot: false })
  }
  const send = async (text: string, metadata?: Record<string, unknown>): Promise<void> => {
    showError(undefined)
    await sendPayload({ type: 'text', text }, metadata)
  }
  attachUpload({ form, input, api, config: settings, send: sendPayload, showError })

  /** A choice, a dropdown or a card action of message `replyTo`: sends the value, the bubble shows the label. */
  const sendFromButton = (replyTo: string, text: string, label?: string): Promise<void> => {
    input.focus()
    const sending = send(text, replyMetadata(label ?? text, replyTo))
    sending.catch((err: unknown) => showError(`Your message was not sent: ${errorText(err)}. Try again.`))
    return sending
  }

  /** Answered choices and the labels of the user's answers, brought up to date once per batch of messages. */
  let answersQueued = false
  const refreshAnswers = () => {
    if (answersQueued) return
    answersQueued = true
    queueMicrotask(() => {
      answersQueued = false
      applyAnswers(timeline.messages, saved?.userId, (id) => elements.get(id))
    })
  }

  /**
   * Tells embed.js (the parent page) that a message of someone else arrived while the page runs: its launcher
   * counts them as unread while the panel is closed. Only the id goes out: the host page learns nothing of the text.
   */
  const notifyParent = (message: Shown) => {
    if (embedded && message.userId !== saved?.userId) window.parent.postMessage({ type: 'parley:message', id: message.id }, '*')
  }

  /** Shows a message in its place in the log (false: already shown); `quiet`: an older one, the view does not follow it. */
  function show(message: Shown, quiet = false): boolean {
    const index = timeline.add(message)
    if (index < 0) return false
    const mine = message.userId === saved?.userId
    // A person answering a handed-off conversation: their name (and avatar) on the bubble; joined/left as a line.
    const agent = mine ? undefined : agentOf(message)
    if (agent?.event) {
      const line = h('p', {
        class: 'pw-msg pw-system', text: message.payload.type === 'text' ? String(message.payload.text) : `${agent.name} ${agent.event}`,
        attrs: { 'data-message-id': message.id, 'data-user-id': message.userId, 'data-handoff': agent.event, role: 'status' },
      })
      elements.set(message.id, line)
      const next = timeline.messages[index + 1]
      log.insertBefore(line, (next && elements.get(next.id)) ?? null)
      if (!quiet && following) toBottom()
      return true
    }
    const who = mine ? 'You' : agent ? agent.name : message.isBot === false ? 'Someone' : 'Bot'
    const stick = !quiet && (mine || following)
    let body: HTMLElement
    const payload = message.payload
    const label = mine && payload.type === 'text' ? readReplyMetadata(message).label : undefined
    // An answer from knowledge: its sources under the bubble, rather than as the text's last paragraph.
    const citations = mine ? [] : citationsOf(message.metadata)
    try {
      body = label !== undefined && payload.type === 'text'
        ? h('p', { class: 'pw-text', text: label, attrs: { 'data-value': String(payload.text) } })
        : citations.length > 0 && payload.type === 'text'
          ? h('p', { class: 'pw-text', text: withoutSourcesLine(String(payload.text)) })
          : renderPayload(message.payload, { send: (text, label) => sendFromButton(message.id, text, label) })
    } catch {
      body = h('p', { class: 'pw-text', text: describePayload(message.payload) })
    }
    const el = h('article', {
      class: `pw-msg ${mine ? 'pw-msg-mine' : 'pw-msg-theirs'} pw-type-${String(message.payload.type).replace(/[^a-z]/g, '')}`,
      attrs: { 'data-message-id': message.id, 'data-user-id': message.userId },
    }, [
      srOnly(`${who} said: `),
      agent ? agentHeader(agent.name, agent.avatarUrl) : null,
      h('div', { class: 'pw-bubble' }, [body]),
      citations.length > 0 ? renderSources(citations) : null,
      h('time', { class: 'pw-time', text: timeOf(message.createdAt), attrs: { datetime: message.createdAt } }),
      who === 'Bot' && !agent ? feedbackButtons(feedbackOf(message.metadata), async (value) => void (await api.setMessageFeedback(message.id, value))) : null,
    ])
    elements.set(message.id, el)
    const after = timeline.messages[index + 1]
    log.insertBefore(el, (after && elements.get(after.id)) ?? null)
    if (stick) {
      following = true
      toBottom()
    }
    refreshAnswers()
    return true
  }

  /** The name and avatar above an agent's bubble (initials when there is no picture, or an unsafe one). */
  function agentHeader(name: string, avatarUrl: string | undefined): HTMLElement {
    const src = safeUrl(avatarUrl, 'media')
    return h('div', { class: 'pw-agent', attrs: { 'aria-hidden': 'true' } }, [
      src
        ? h('img', { class: 'pw-agent-avatar', attrs: { src, alt: '', referrerpolicy: 'no-referrer' } })
        : h('span', { class: 'pw-agent-avatar pw-agent-initials', text: initialsOf(name) }),
      h('span', { class: 'pw-agent-name', text: name }),
    ])
  }

  function hide(id: string): void {
    if (timeline.remove(id) < 0) return
    elements.get(id)?.remove()
    elements.delete(id)
  }

  function onSignal(text: string): void {
    let signal: Signal
    try {
      signal = JSON.parse(text) as Signal
    } catch {
      return
    }
    if (!signal || typeof signal !== 'object') return
    if (signal.type === 'message_created' && signal.data?.conversationId === saved?.conversationId) {
      if (signal.data.userId !== saved?.userId) typing.set(false)
      streaming.end(signal.data.metadata?.streamId)
      if (show(signal.data)) notifyParent(signal.data)
    } else if (signal.type === 'message_stream_delta' && signal.data?.conversationId === saved?.conversationId) {
      typing.set(false)
      streaming.delta(signal.data)
    } else if (signal.type === 'message_stream_complete' || signal.type === 'message_stream_abort') streaming.end(signal.data?.streamId)
    else if (signal.type === 'message_deleted') hide(signal.data.id)
    else if (signal.type === 'ping' && typeof signal.data?.typing === 'boolean') {
      typing.set(signal.data.typing)
      if (signal.data.typing && following) toBottom()
    }
  }

  const announce = announcer(root)
  const history = new OlderHistory({
    log,
    loadPage: async (token) => {
      const conversationId = saved?.conversationId ?? ''
      const { messages, meta } = await api.listMessages(conversationId, token)
      return { messages: messages.filter((m) => m.conversationId === conversationId), ...(meta.nextToken && { nextToken: meta.nextToken }) }
    },
    show: (messages) => {
      for (const m of messages) show(m, true)
    },
    announce,
  })
  /** Empties the log (another conversation is about to be shown). */
  function clearLog(): void {
    streaming.clear()
    for (const m of [...timeline.messages]) hide(m.id)
    history.clear()
    historyOf = undefined
  }
  /** The conversation whose newest page is shown (older pages come through `history`). */
  let historyOf: string | undefined

  /**
   * Reads the conversation from the server. The first time: its newest page, older ones on demand (`history`).
   * After a reconnection: the newest pages down to one already shown (at most 10), to fill what the stream missed.
   */
  async function catchUp(): Promise<void> {
    const conversationId = saved?.conversationId
    if (!conversationId) return
    const first = historyOf !== conversationId
    log.setAttribute('aria-busy', 'true')
    try {
      if (first) {
        const { messages, meta } = await api.listMessages(conversationId)
        if (historyOf !== undefined) clearLog() // another conversation was shown (a new session)
        // Oldest first, so the log grows downwards as it would have live.
        for (const m of [...messages].reverse()) show(m)
        historyOf = conversationId
        following = true
        toBottom()
        history.reset(meta.nextToken)
        return
      }
      let token: string | undefined
      const pages: Message[][] = []
      for (let page = 0; page < 10; page++) {
        const { messages, meta } = await api.listMessages(conversationId, token)
        pages.push(messages)
        token = meta.nextToken
        if (!token || messages.some((m) => timeline.has(m.id))) break
      }
      // What the stream missed while it was down arrived meanwhile: unread too.
      for (const m of pages.flat().reverse()) if (show(m)) notifyParent(m)
    } finally {
      log.setAttribute('aria-busy', 'false')
    }
  }

  // ---- session: user, conversation ----

  async function ensureSession(): Promise<void> {
    saved = load()
    if (saved) {
      api.key = saved.userKey
      try {
        await api.getMe()
      } catch (err) {
        if (!(err instanceof ChatApiError && (err.status === 401 || err.status === 404))) throw err
        saved = undefined // the key is no longer valid (user deleted, database reset): start afresh
      }
    }
    if (!saved) {
      api.key = undefined
      const { user, key } = await api.createUser({})
      saved = { userKey: key, userId: user.id }
      api.key = key
      save()
    }
    if (saved.conversationId) {
      try {
        await api.getConversation(saved.conversationId)
      } catch (err) {
        if (!(err instanceof ChatApiError && (err.status === 403 || err.status === 404))) throw err
        delete saved.conversationId
      }
    }
    if (!saved.conversationId) {
      const { conversation } = await api.createConversation()
      saved.conversationId = conversation.id
      save()
    }
    root.dataset.conversationId = saved.conversationId
    root.dataset.userId = saved.userId
  }

  /** Retries the session setup until it works (the server may be starting or unreachable). */
  async function connect(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await ensureSession()
        return
      } catch (err) {
        if (err instanceof ChatApiError && err.status === 404 && err.type === 'ResourceNotFound') {
          setStatus('This chat is not available.', 'unavailable')
        } else {
          setStatus('Cannot reach the chat server. Retrying…', 'reconnecting')
        }
        await sleep(Math.min(15_000, 500 * 2 ** attempt))
      }
    }
  }

  /** While the page moves to a new conversation (the stream is restarted: not a lost connection). */
  let switching = false
  const statusText: Record<StreamStatus, [string, string]> = {
    connecting: ['Connecting…', 'connecting'],
    open: ['Online', 'open'],
    reconnecting: ['Connection lost. Reconnecting…', 'reconnecting'],
    stopped: ['Disconnected', 'stopped'],
  }

  const stream = new ResilientStream({
    url: () => api.listenUrl(saved?.conversationId ?? ''),
    headers: () => api.authHeaders(),
    onFrame: (frame) => onSignal(frame.data),
    onStatus: (status) => {
      const [text, connection] = switching && status !== 'open' ? ['Starting a new conversation…', 'connecting'] : statusText[status]
      setStatus(text, connection)
      if (status === 'open') switching = false
    },
    onOpen: async () => {
      typing.set(false) // the server says it again while the bot is still typing
      streaming.clear() // pieces missed while away are not sent again: the reply comes as its message
      // The stream is open before the history is read, so nothing falls in between; the timeline drops repeats.
      await catchUp().catch(() => undefined)
      setState('ready')
    },
    onRefused: async (status) => {
      // The user or the conversation is gone (e.g. the database was reset): start a new session.
      if (status === 401 || status === 403 || status === 404) {
        ready = connect()
        await ready
        stream.lastEventId = undefined
        return true
      }
      return false
    },
  })

  window.addEventListener('online', () => stream.retryNow())
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') stream.retryNow()
  })

  // ---- composer ----

  const grow = () => {
    input.style.height = 'auto'
    input.style.height = `${Math.min(input.scrollHeight, 160)}px`
  }
  input.addEventListener('input', grow)
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault()
      form.requestSubmit()
    }
  })
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const text = input.value.trim()
    if (!text) return
    input.value = ''
    grow()
    send(text).catch((err: unknown) => {
      if (!input.value) input.value = text
      grow()
      showError(`Your message was not sent: ${errorText(err)}. Press Enter to try again.`)
    })
  })

  addEmojiPicker(form, input)

  // ---- a new conversation ----

  /** Leaves the current conversation (kept on the server) for a new one; the bot greets in it as in the first. */
  async function newConversation(): Promise<void> {
    showError(undefined)
    try {
      await ready
      if (!saved) return
      const { conversation } = await api.createConversation()
      switching = true
      await stream.stop()
      saved.conversationId = conversation.id
      save()
      root.dataset.conversationId = conversation.id
      clearLog()
      stream.lastEventId = undefined
      stream.start()
      announce('New conversation started.')
      input.focus()
    } catch (err) {
      showError(`A new conversation could not be started: ${errorText(err)}. Try again.`)
      switching = false
      if (!stream.running) stream.start()
    }
  }
  addRestartButton(closeButton.parentElement!, closeButton, newConversation)

  setState('connecting')
  ready = connect()
  void ready.then(() => stream.start())
}

function errorText(err: unknown): string {
  if (err instanceof ChatApiError) return err.status === 0 ? 'the chat server cannot be reached' : err.message
  return err instanceof Error ? err.message : String(err)
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start)
else start()
