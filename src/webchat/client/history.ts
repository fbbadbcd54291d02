/// <reference lib="dom" />
import type { Message } from '../shared/types.js'
import { h } from './dom.js'

export interface OlderHistoryOptions {
  /** The scrolling message log; the control is kept as its first child. */
  log: HTMLElement
  /** One page of older messages (the Chat API's listMessages: newest first) and the token of the next. */
  loadPage(nextToken: string): Promise<{ messages: Message[]; nextToken?: string }>
  /** Shows messages without scrolling to them. */
  show(messages: Message[]): void
  announce(text: string): void
}

/**
 * Older messages, a page at a time, back to the beginning of the conversation (listMessages' nextToken): a
 * "Load older messages" button at the top of the log, also pressed by itself when the reader scrolls near the top
 * (infinite scroll). The reader's place is kept while messages are added above it.
 */
export class OlderHistory {
  readonly el: HTMLElement
  private readonly button: HTMLButtonElement
  private readonly end: HTMLElement
  private token: string | undefined
  private loading: Promise<void> | undefined
  private generation = 0
  private failed = false

  constructor(private readonly options: OlderHistoryOptions) {
    this.button = h('button', { class: 'pw-history-button', text: 'Load older messages', attrs: { type: 'button' }, on: { click: () => void this.loadOlder() } })
    this.end = h('p', { class: 'pw-history-end', text: 'Beginning of the conversation' })
    this.el = h('div', { class: 'pw-history', attrs: { 'data-state': 'off' } }, [this.button, this.end])
    this.button.hidden = true
    this.end.hidden = true
    options.log.prepend(this.el)
    if (typeof IntersectionObserver === 'function') {
      new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) void this.loadOlder({ auto: true })
      }, { root: options.log, rootMargin: '400px 0px 0px 0px' }).observe(this.el)
    }
  }

  get state(): string {
    return this.el.dataset.state ?? 'off'
  }

  /** After the newest page of a conversation: `nextToken` leads to older messages (none: this is all of it). */
  reset(nextToken: string | undefined): void {
    this.generation++
    this.loading = undefined
    this.failed = false
    this.token = nextToken
    this.setState(nextToken ? 'more' : 'done')
    if (!this.el.parentNode || this.options.log.firstChild !== this.el) this.options.log.prepend(this.el)
    this.fillView()
  }

  /** Nothing loaded yet (a new conversation is being set up). */
  clear(): void {
    this.generation++
    this.loading = undefined
    this.token = undefined
    this.setState('off')
  }

  loadOlder(options: { auto?: boolean } = {}): Promise<void> {
    if (this.loading) return this.loading
    if (!this.token || (options.auto && this.failed)) return Promise.resolve()
    const token = this.token
    const generation = this.generation
    const { log } = this.options
    this.setState('loading')
    log.setAttribute('aria-busy', 'true')
    this.loading = (async () => {
      try {
        const page = await this.options.loadPage(token)
        if (generation !== this.generation) return
        // Keep the reader's place: the distance from the bottom does not change while messages go in above.
        const fromBottom = log.scrollHeight - log.scrollTop
        this.options.show([...page.messages].reverse())
        log.scrollTop = log.scrollHeight - fromBottom
        this.failed = false
        this.token = page.nextToken
        this.setState(page.nextToken ? 'more' : 'done')
        const n = page.messages.length
        this.options.announce(`${n} older ${n === 1 ? 'message' : 'messages'} loaded${page.nextToken ? '' : '. This is the beginning of the conversation'}.`)
      } catch {
        if (generation !== this.generation) return
        this.failed = true
        this.setState('more')
        this.button.textContent = 'Could not load older messages. Try again'
      } finally {
        if (generation === this.generation) {
          this.loading = undefined
          log.setAttribute('aria-busy', 'false')
        }
      }
      this.fillView()
    })()
    return this.loading
  }

  /** While the top of the log is in view (a short page of messages), keep loading. */
  private fillView(): void {
    if (this.state !== 'more' || this.failed) return
    requestAnimationFrame(() => {
      const log = this.options.log.getBoundingClientRect()
      const top = this.el.getBoundingClientRect()
      if (top.bottom > log.top - 400) void this.loadOlder({ auto: true })
    })
  }

  private setState(state: 'off' | 'more' | 'loading' | 'done'): void {
    this.el.dataset.state = state
    this.button.hidden = state === 'off' || state === 'done'
    if (state === 'loading') this.button.textContent = 'Loading older messages…'
    else if (state === 'more' && !this.failed) this.button.textContent = 'Load older messages'
    this.end.hidden = state !== 'done'
    // The button goes away at the beginning of the conversation: its keyboard user stays in the log.
    if (state === 'done' && document.activeElement === this.button) this.options.log.focus()
  }
}
