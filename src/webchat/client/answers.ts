/// <reference lib="dom" />
import { resolveAnswers } from '../shared/answers.js'
import type { Message } from '../shared/types.js'
import { h, srOnly } from './dom.js'

/**
 * Shows what the user answered: an answered choice or dropdown is disabled (its controls say so to screen
 * readers: disabled, and "your answer" on the option picked), and the user's bubble shows the option's label
 * rather than the value the bot received. Applied again after every batch of messages, since an answer may be
 * shown before its question (older history is loaded later) or come from another client.
 */
export function applyAnswers(messages: readonly Message[], me: string | undefined, elementOf: (id: string) => HTMLElement | undefined): void {
  const { choices, labels } = resolveAnswers(messages, me)
  for (const [id, index] of choices) {
    const el = elementOf(id)
    if (el) markAnswered(el, index)
  }
  for (const [id, label] of labels) {
    const el = elementOf(id)
    if (el) showLabel(el, label)
  }
}

/** Disables a message's choice buttons or dropdown, marking the option picked (`index`, -1 for none). */
export function markAnswered(el: HTMLElement, index: number): void {
  const key = String(index)
  if (el.dataset.answered === key) return
  el.dataset.answered = key
  const choice = el.querySelector<HTMLElement>('.pw-choice')
  if (choice) {
    choice.querySelectorAll<HTMLButtonElement>('button.pw-button').forEach((button) => {
      button.disabled = true
      const chosen = button.dataset.index === key
      button.classList.toggle('pw-chosen', chosen)
      button.querySelector('.pw-answer-note')?.remove()
      if (chosen) button.appendChild(h('span', { class: 'pw-answer-note' }, [srOnly(' (your answer)')]))
    })
  }
  const dropdown = el.querySelector<HTMLElement>('.pw-dropdown')
  if (dropdown) {
    const select = dropdown.querySelector<HTMLSelectElement>('select')
    if (select) {
      if (index >= 0) select.value = key
      select.disabled = true
    }
    dropdown.querySelectorAll<HTMLButtonElement>('button').forEach((button) => {
      button.disabled = true
    })
  }
}

/** The user's bubble shows `label` (the value stays in `data-value`). */
export function showLabel(el: HTMLElement, label: string): void {
  const text = el.querySelector<HTMLElement>('.pw-bubble > p.pw-text')
  if (!text || text.textContent === label) return
  text.dataset.value ??= text.textContent ?? ''
  text.textContent = label
}
