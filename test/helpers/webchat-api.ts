import { SseStream } from '../e2e/sse-reader.js'

type Json = Record<string, any>
export type WebchatFrame = { type: string; data: Json }

/**
 * One official webchat session on Parley's webchat API (/webchat-api/{clientId}), as `@botpress/webchat` opens it:
 * GET /initialize with its literal `timeout: 60000` header (and a key, a conversation id, a query or headers when
 * given), waiting for the `init` frame that must come first; then messages posted as its user.
 */
export class WebchatSession {
  private constructor(readonly base: string, readonly stream: SseStream, readonly init: Json) {}

  static async open(baseUrl: string, clientId: string, o: { key?: string; conversationId?: string; query?: string; headers?: Record<string, string> } = {}): Promise<WebchatSession> {
    const base = `${baseUrl}/webchat-api/${clientId}`
    const q = o.query ?? (o.conversationId ? `?conversationId=${o.conversationId}` : '')
    const stream = await SseStream.open(`${base}/initialize${q}`, { headers: { timeout: '60000', ...(o.key && { 'x-user-key': o.key }), ...o.headers } })
    if (stream.status !== 200) {
      await stream.close()
      throw new Error(`/initialize answered ${stream.status}`)
    }
    await stream.waitUntil(() => frames(stream).length > 0)
    const first = frames(stream)[0]!
    if (first.type !== 'init') throw new Error(`the first frame is ${first.type}, not init`)
    return new WebchatSession(base, stream, first.data)
  }

  get key(): string {
    return this.init.user.userKey as string
  }

  get conversationId(): string {
    return this.init.conversation.id as string
  }

  /** The frames after `init`, keep-alives left out. */
  signals(): WebchatFrame[] {
    return frames(this.stream).slice(1)
  }

  /** POST /messages as the session's user in its conversation; the answer's status and message. */
  async send(payload: Json, metadata?: Json): Promise<{ status: number; message: Json }> {
    const res = await fetch(`${this.base}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user-key': this.key },
      body: JSON.stringify({ conversationId: this.conversationId, payload, ...(metadata && { metadata }) }),
    })
    return { status: res.status, message: ((await res.json()) as Json).message }
  }

  close(): Promise<void> {
    return this.stream.close()
  }
}

/** A stream's parsed frames, keep-alives left out. */
export const frames = (s: SseStream): WebchatFrame[] => s.frames.map((f) => f.json as WebchatFrame).filter((f) => f && typeof f === 'object' && f.type !== 'ping')
