/// <reference lib="dom" />
import { h } from './dom.js'

/** A model's reply being produced: the pieces received so far, kept by sequence number (they may arrive out of order). */
interface Draft {
  element: HTMLElement
  text: HTMLElement
  pieces: string[]
}

/** What an answer's citation markers look like while it streams (`[1]`): the final message has them taken out. */
const MARKERS = / ?\[\d{1,2}\]/g

/**
 * Replies streamed by the bot (a knowledge answer composed by a model; docs/webchat.md "Streamed replies"): each
 * `message_stream_delta` adds its piece to a draft bubble at the end of the log; the draft goes when the reply arrives
 * as a message (`message_stream_complete`, or its `message_created` carrying `metadata.streamId`) or is aborted.
 * The draft is hidden from screen readers (`aria-hidden`): they hear the reply once, when it is complete.
 */
export class StreamingReplies {
  private readonly drafts = new Map<string, Draft>()

  constructor(private readonly log: HTMLElement, private readonly onGrow: () => void) {}

  delta(data: { streamId?: unknown; sequence?: unknown; delta?: unknown }): void {
    const { streamId, sequence, delta } = data
    if (typeof streamId !== 'string' || typeof delta !== 'string' || typeof sequence !== 'number' || !Number.isInteger(sequence) || sequence < 0 || sequence > 100_000) return
    let draft = this.drafts.get(streamId)
    if (!draft) {
      const text = h('p', { class: 'pw-text' })
      const element = h('article', { class: 'pw-msg pw-msg-theirs pw-type-text pw-streaming', attrs: { 'data-stream-id': streamId, 'aria-hidden': 'true' } }, [
        h('div', { class: 'pw-bubble' }, [text]),
      ])
      draft = { element, text, pieces: [] }
      this.drafts.set(streamId, draft)
      this.log.append(element)
    }
    draft.pieces[sequence] = delta
    // Text only (textContent): a piece is never markup. A gap (a piece still on its way) shows nothing yet.
    draft.text.textContent = Array.from(draft.pieces, (p) => p ?? '').join('').replace(MARKERS, '')
    this.onGrow()
  }

  /** The reply arrived as a message, or was given up: its draft goes. */
  end(streamId: unknown): void {
    if (typeof streamId !== 'string') return
    this.drafts.get(streamId)?.element.remove()
    this.drafts.delete(streamId)
  }

  /** Every draft goes (another conversation is shown, or the stream reconnected and the messages are read again). */
  clear(): void {
    for (const id of [...this.drafts.keys()]) this.end(id)
  }
}
