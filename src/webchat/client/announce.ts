/// <reference lib="dom" />
import { h } from './dom.js'

/**
 * A polite status region that only screen readers get, for what the page does on its own and does not show as
 * a message (older messages loaded, a new conversation started). One per page, created on first use.
 */
export function announcer(root: HTMLElement): (text: string) => void {
  let region: HTMLElement | undefined
  return (text) => {
    region ??= root.appendChild(h('p', { class: 'pw-sr-only', attrs: { id: 'pw-announce', role: 'status', 'aria-live': 'polite' } }))
    // Cleared first, so the same sentence said twice is announced twice.
    region.textContent = ''
    setTimeout(() => {
      if (region) region.textContent = text
    }, 50)
  }
}
