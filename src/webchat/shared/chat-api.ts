import type { ChatUser, Conversation, Message, MessagePayload } from './types.js'

/** A non-2xx answer of the Chat API, with the Botpress error body's `type` when there was one. */
export class ChatApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message)
    this.name = 'ChatApiError'
  }
}

type FetchLike = typeof fetch

/**
 * The public Chat API (`{PARLEY_PUBLIC_URL}/{webhookId}`) over plain fetch, with the user key in `x-user-key`.
 * Only the operations the webchat and `parley chat` need.
 */
export class ChatApi {
  key: string | undefined

  constructor(
    /** The integration's Chat API base, e.g. `http://127.0.0.1:3000/<webhookId>` (no trailing slash). */
    readonly baseUrl: string,
    key?: string,
    private readonly fetchImpl: FetchLike = (input, init) => fetch(input, init),
  ) {
    this.key = key
  }

  url(path: string): string {
    return this.baseUrl.replace(/\/+$/, '') + path
  }

  /** Headers of an authenticated request (also used by the stream). */
  authHeaders(): Record<string, string> {
    return this.key ? { 'x-user-key': this.key } : {}
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response
    try {
      response = await this.fetchImpl(this.url(path), {
        method,
        headers: { accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }), ...this.authHeaders() },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        cache: 'no-store',
      })
    } catch (err) {
      throw new ChatApiError(0, 'Network', `Cannot reach ${this.baseUrl}: ${err instanceof Error ? err.message : String(err)}`)
    }
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = text === '' ? {} : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!response.ok) {
      const e = (parsed ?? {}) as { type?: unknown; message?: unknown }
      throw new ChatApiError(
        response.status,
        typeof e.type === 'string' ? e.type : 'Unknown',
        typeof e.message === 'string' ? e.message : `HTTP ${response.status} from ${method} ${path}`,
      )
    }
    if (parsed === undefined) throw new ChatApiError(response.status, 'Unknown', `${method} ${path} answered something that is not JSON`)
    return parsed as T
  }

  createUser(body: { name?: string } = {}): Promise<{ user: ChatUser; key: string }> {
    return this.call('POST', '/users', body)
  }

  getMe(): Promise<{ user: ChatUser }> {
    return this.call('GET', '/users/me')
  }

  createConversation(): Promise<{ conversation: Conversation }> {
    return this.call('POST', '/conversations', {})
  }

  getConversation(id: string): Promise<{ conversation: Conversation }> {
    return this.call('GET', `/conversations/${encodeURIComponent(id)}`)
  }

  listMessages(conversationId: string, nextToken?: string): Promise<{ messages: Message[]; meta: { nextToken?: string } }> {
    const query = nextToken ? `?nextToken=${encodeURIComponent(nextToken)}` : ''
    return this.call('GET', `/conversations/${encodeURIComponent(conversationId)}/messages${query}`)
  }

  /** The newest messages of a conversation, up to `maxPages` pages (the API lists newest first). */
  async recentMessages(conversationId: string, maxPages = 5): Promise<Message[]> {
    const all: Message[] = []
    let token: string | undefined
    for (let page = 0; page < maxPages; page++) {
      const { messages, meta } = await this.listMessages(conversationId, token)
      all.push(...messages)
      token = meta.nextToken
      if (!token) break
    }
    return all
  }

  createMessage(conversationId: string, payload: MessagePayload, metadata?: Record<string, unknown>): Promise<{ message: Message }> {
    return this.call('POST', '/messages', { conversationId, payload, ...(metadata !== undefined && { metadata }) })
  }

  /** Thumbs up or down on a bot message (Parley's setMessageFeedback); null removes it. */
  setMessageFeedback(messageId: string, value: 'positive' | 'negative' | null): Promise<{ message: Message }> {
    return this.call('PUT', `/messages/${encodeURIComponent(messageId)}/feedback`, { value })
  }

  /** A signed upload URL for a file the user sends (Parley's createFileUpload; the bot's settings must allow it). */
  createFileUpload(body: { name: string; contentType: string; size: number }): Promise<{ file: { id: string; uploadUrl: string; url: string; contentType: string; size: number } }> {
    return this.call('POST', '/files', body)
  }

  addParticipant(conversationId: string, userId: string): Promise<{ participant: ChatUser }> {
    return this.call('POST', `/conversations/${encodeURIComponent(conversationId)}/participants`, { userId })
  }

  /** The SSE stream's URL (the official client does not encode the id here; ids are [A-Za-z0-9_-]). */
  /** The stream of a conversation; `replay=none`: the page reads the history once the stream is open (no replay window). */
  listenUrl(conversationId: string): string {
    return this.url(`/conversations/${encodeURIComponent(conversationId)}/listen?replay=none`)
  }
}
