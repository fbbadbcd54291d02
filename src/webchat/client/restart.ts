/// <reference lib="dom" />
import { h } from './dom.js'

/**
 * "New chat" in the header: leaves the current conversation (it stays on the server) and starts a new one, as
 * Botpress's webchat's "restart conversation" does. `restart` does the work; the button is busy meanwhile.
 */
export function addRestartButton(header: HTMLElement, before: Element | null, restart: () => Promise<void>): HTMLButtonElement {
  const button = h('button', {
    class: 'pw-restart',
    text: 'New chat',
    attrs: { type: 'button', id: 'pw-restart', title: 'Start a new conversation', 'aria-describedby': 'pw-restart-hint' },
  })
  const hint = h('span', { class: 'pw-sr-only', text: 'Starts a new conversation with the bot; this one is left behind.', attrs: { id: 'pw-restart-hint' } })
  button.addEventListener('click', () => {
    if (button.getAttribute('aria-busy') === 'true') return
    button.setAttribute('aria-busy', 'true')
    restart().finally(() => button.removeAttribute('aria-busy'))
  })
  header.insertBefore(button, before)
  header.appendChild(hint)
  return button
}
