/// <reference lib="dom" />
import { h } from './dom.js'

/** A small, fixed set: no emoji font or data file to download. */
const EMOJI: Array<[string, string]> = [
  ['😀', 'grinning face'], ['😂', 'face with tears of joy'], ['😊', 'smiling face'], ['😍', 'heart eyes'],
  ['😉', 'winking face'], ['😎', 'cool face'], ['🤔', 'thinking face'], ['😅', 'sweat smile'],
  ['😢', 'crying face'], ['😮', 'surprised face'], ['😡', 'angry face'], ['🙏', 'folded hands'],
  ['👍', 'thumbs up'], ['👎', 'thumbs down'], ['👋', 'waving hand'], ['👏', 'clapping hands'],
  ['🙌', 'raised hands'], ['💪', 'flexed biceps'], ['❤️', 'red heart'], ['🎉', 'party popper'],
  ['🔥', 'fire'], ['✅', 'check mark'], ['❌', 'cross mark'], ['❓', 'question mark'],
]

/**
 * The composer's emoji picker: a button that opens a grid of emoji above the message box. The grid is one tab
 * stop (arrow keys, Home and End move in it); Enter or a click inserts the emoji at the caret and gives the focus
 * back to the message box; Escape or a click elsewhere closes it and gives the focus back to the button.
 */
export function addEmojiPicker(form: HTMLFormElement, input: HTMLTextAreaElement): void {
  const toggle = h('button', {
    class: 'pw-emoji-toggle',
    text: '😊',
    attrs: { type: 'button', 'aria-label': 'Insert emoji', 'aria-expanded': 'false', 'aria-controls': 'pw-emoji', title: 'Insert emoji' },
  })
  const buttons = EMOJI.map(([char, name], i) => h('button', {
    class: 'pw-emoji',
    text: char,
    attrs: { type: 'button', 'aria-label': name, tabindex: i === 0 ? '0' : '-1', 'data-emoji': char },
  }))
  const panel = h('div', { class: 'pw-emoji-panel', attrs: { id: 'pw-emoji', role: 'group', 'aria-label': 'Emoji' } }, buttons)
  panel.hidden = true

  const isOpen = () => !panel.hidden
  const close = (focusBack: boolean) => {
    if (!isOpen()) return
    panel.hidden = true
    toggle.setAttribute('aria-expanded', 'false')
    if (focusBack) toggle.focus()
  }
  const open = () => {
    panel.hidden = false
    toggle.setAttribute('aria-expanded', 'true')
    ;(buttons.find((b) => b.tabIndex === 0) ?? buttons[0])?.focus()
  }
  const insert = (text: string) => {
    const start = input.selectionStart ?? input.value.length
    const end = input.selectionEnd ?? start
    input.setRangeText(text, start, end, 'end')
    input.dispatchEvent(new Event('input', { bubbles: true }))
    close(false)
    input.focus()
  }
  const move = (from: number, to: number) => {
    const target = buttons[Math.max(0, Math.min(buttons.length - 1, to))]
    if (!target) return
    buttons[from]!.tabIndex = -1
    target.tabIndex = 0
    target.focus()
  }

  toggle.addEventListener('click', () => (isOpen() ? close(true) : open()))
  buttons.forEach((button, i) => {
    button.addEventListener('click', () => insert(button.dataset.emoji ?? ''))
    button.addEventListener('keydown', (event) => {
      // As many columns as the grid shows (fewer on a phone).
      const columns = Math.max(1, getComputedStyle(panel).gridTemplateColumns.split(' ').filter(Boolean).length)
      const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns }
      if (event.key in step) move(i, i + step[event.key]!)
      else if (event.key === 'Home') move(i, 0)
      else if (event.key === 'End') move(i, buttons.length - 1)
      else return
      event.preventDefault()
    })
  })
  panel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault()
      event.stopPropagation() // not the embedded page's Escape (which closes the whole chat)
      close(true)
    }
  })
  document.addEventListener('pointerdown', (event) => {
    const target = event.target as Node
    if (isOpen() && !panel.contains(target) && !toggle.contains(target)) close(false)
  })
  form.insertBefore(toggle, input)
  form.appendChild(panel)
}
