/// <reference lib="dom" />
import { h } from './dom.js'

/**
 * The typing indicator under the message log: shown while the server says the bot is typing (keep-alive frames
 * `{"type":"ping","data":{"typing":true|false}}`, see docs/webchat.md), hidden when the bot's message arrives or
 * the stream reconnects. A `role="status"` region: screen readers hear "Ada is typing…" once.
 */
export class TypingIndicator {
  readonly element: HTMLElement
  private readonly label: HTMLElement

  constructor(log: HTMLElement, private readonly name: () => string) {
    this.label = h('span', { class: 'pw-typing-label' })
    this.element = h('div', { class: 'pw-typing', attrs: { id: 'pw-typing', role: 'status', 'aria-live': 'polite' } }, [
      h('span', { class: 'pw-typing-dots', attrs: { 'aria-hidden': 'true' } }, [h('span'), h('span'), h('span')]),
      this.label,
    ])
    this.element.hidden = true
    log.insertAdjacentElement('afterend', this.element)
  }

  get active(): boolean {
    return !this.element.hidden
  }

  set(active: boolean): void {
    if (active === this.active) return
    this.label.textContent = active ? `${this.name()} is typing…` : ''
    this.element.hidden = !active
    this.element.parentElement?.classList.toggle('pw-is-typing', active)
  }
}
