/// <reference lib="dom" />
import { ChatApi, ChatApiError } from '../shared/chat-api.js'
import { describePayload } from '../shared/payload.js'
import { ResilientStream, type StreamStatus } from '../shared/sse.js'
import { Timeline } from '../shared/timeline.js'
import type { Message, MessagePayload, Signal, SignalMessage } from '../shared/types.js'
import { h, srOnly } from './dom.js'
import { applyWebchatConfig, pageWebchatConfig } from './identity.js'
import { TypingIndicator } from './typing.js'
import { feedbackButtons, feedbackOf } from './feedback.js'
import { attachUpload } from './upload.js'
import { renderPayload } from './render.js'

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
  if (embedded) {
    closeButton.hidden = false
    const close = () => window.parent.postMessage({ type: 'parley:close' }, '*')
    closeButton.addEventListener('click', close)
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') close()
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

  const sendPayload = async (payload: MessagePayload): Promise<void> => {
    await ready
    const conversationId = saved?.conversationId
    if (!conversationId) throw new Error('not connected yet')
    const { message } = await api.createMessage(conversationId, payload)
    show({ ...message, isBot: false })
  }
  const send = async (text: string): Promise<void> => {
    showError(undefined)
    await sendPayload({ type: 'text', text })
  }
  attachUpload({ form, input, api, config: settings, send: sendPayload, showError })

  const sendFromButton = (text: string) => {
    input.focus()
    send(text).catch((err: unknown) => showError(`Your message was not sent: ${errorText(err)}. Try again.`))
  }

  function show(message: Shown): void {
    const index = timeline.add(message)
    if (index < 0) return
    const mine = message.userId === saved?.userId
    const who = mine ? 'You' : message.isBot === false ? 'Someone' : 'Bot'
    const stick = mine || following
    let body: HTMLElement
    try {
      body = renderPayload(message.payload, { send: sendFromButton })
    } catch {
      body = h('p', { class: 'pw-text', text: describePayload(message.payload) })
    }
    const el = h('article', {
      class: `pw-msg ${mine ? 'pw-msg-mine' : 'pw-msg-theirs'} pw-type-${String(message.payload.type).replace(/[^a-z]/g, '')}`,
      attrs: { 'data-message-id': message.id, 'data-user-id': message.userId },
    }, [
      srOnly(`${who} said: `),
      h('div', { class: 'pw-bubble' }, [body]),
      h('time', { class: 'pw-time', text: timeOf(message.createdAt), attrs: { datetime: message.createdAt } }),
      who === 'Bot' ? feedbackButtons(feedbackOf(message.metadata), async (value) => void (await api.setMessageFeedback(message.id, value))) : null,
    ])
    elements.set(message.id, el)
    const after = timeline.messages[index + 1]
    log.insertBefore(el, (after && elements.get(after.id)) ?? null)
    if (stick) {
      following = true
      toBottom()
    }
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
      show(signal.data)
    } else if (signal.type === 'message_deleted') hide(signal.data.id)
    else if (signal.type === 'ping' && typeof signal.data?.typing === 'boolean') {
      typing.set(signal.data.typing)
      if (signal.data.typing && following) toBottom()
    }
  }

  async function catchUp(all: boolean): Promise<void> {
    const conversationId = saved?.conversationId
    if (!conversationId) return
    log.setAttribute('aria-busy', 'true')
    try {
      const messages: Message[] = all ? await api.recentMessages(conversationId, 10) : (await api.listMessages(conversationId)).messages
      // Oldest first, so the log grows downwards as it would have live.
      for (const m of [...messages].reverse()) show(m)
    } finally {
      log.setAttribute('aria-busy', 'false')
      if (all) {
        following = true
        toBottom()
      }
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
      const [text, connection] = statusText[status]
      setStatus(text, connection)
    },
    onOpen: async ({ resumed }) => {
      typing.set(false) // the server says it again while the bot is still typing
      // The stream is open before the history is read, so nothing falls in between; the timeline drops repeats.
      await catchUp(!resumed).catch(() => undefined)
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
