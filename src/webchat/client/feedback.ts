/// <reference lib="dom" />
import { h } from './dom.js'

export type FeedbackValue = 'positive' | 'negative'

const PATHS: Record<FeedbackValue, string> = {
  positive: 'M7 10v11H3V10z M7 10l4-8a2.5 2.5 0 0 1 3 3l-1 4h6a2 2 0 0 1 2 2.3l-1.4 7A2 2 0 0 1 17.6 21H7',
  negative: 'M17 14V3h4v11z M17 14l-4 8a2.5 2.5 0 0 1-3-3l1-4H5a2 2 0 0 1-2-2.3l1.4-7A2 2 0 0 1 6.4 3H17',
}

function thumb(value: FeedbackValue): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg'
  const svg = document.createElementNS(ns, 'svg')
  for (const [k, v] of Object.entries({ viewBox: '0 0 24 24', width: '18', height: '18', fill: 'none', stroke: 'currentColor', 'stroke-width': '2', 'stroke-linejoin': 'round', 'aria-hidden': 'true', focusable: 'false' })) {
    svg.setAttribute(k, v)
  }
  const path = document.createElementNS(ns, 'path')
  path.setAttribute('d', PATHS[value])
  svg.appendChild(path)
  return svg
}

/** The feedback a message carries (`metadata.feedback.value`, docs/webchat.md), if any. */
export function feedbackOf(metadata: unknown): FeedbackValue | undefined {
  const value = (metadata as { feedback?: { value?: unknown } } | undefined)?.feedback?.value
  return value === 'positive' || value === 'negative' ? value : undefined
}

/**
 * Thumbs up and down under a bot message: two toggle buttons (`aria-pressed`) in a labelled group, reachable with
 * Tab and pressed with Enter or Space. Pressing the pressed one again removes the feedback. `send` records it (the
 * Chat API's setMessageFeedback); on failure the buttons go back to what they showed.
 */
export function feedbackButtons(initial: FeedbackValue | undefined, send: (value: FeedbackValue | null) => Promise<void>): HTMLElement {
  let current = initial
  const buttons = {} as Record<FeedbackValue, HTMLButtonElement>
  const status = h('span', { class: 'pw-sr-only', attrs: { role: 'status' } })
  const render = () => {
    for (const value of ['positive', 'negative'] as const) buttons[value].setAttribute('aria-pressed', String(current === value))
  }
  for (const value of ['positive', 'negative'] as const) {
    buttons[value] = h('button', {
      class: `pw-feedback-button pw-feedback-${value}`,
      attrs: { type: 'button', 'aria-label': value === 'positive' ? 'Helpful' : 'Not helpful', 'data-feedback': value },
      on: {
        click: () => {
          const before = current
          current = current === value ? undefined : value
          render()
          buttons[value].disabled = true
          send(current ?? null)
            .then(() => {
              status.textContent = current ? 'Thanks for your feedback.' : 'Feedback removed.'
            })
            .catch(() => {
              current = before
              render()
              status.textContent = 'Your feedback was not saved. Try again.'
            })
            .finally(() => {
              buttons[value].disabled = false
            })
        },
      },
    }, [thumb(value)])
  }
  render()
  return h('div', { class: 'pw-feedback', attrs: { role: 'group', 'aria-label': 'Rate this answer' } }, [buttons.positive, buttons.negative, status])
}
