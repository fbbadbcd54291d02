/// <reference lib="dom" />
import type { CardBody } from '../shared/types.js'
import { h } from './dom.js'

/**
 * A carousel of cards: a row that scrolls sideways with scroll-snap (swipe on a touch screen, the arrow keys when
 * the row has the focus, Shift+wheel or a trackpad), plus Previous/Next buttons and a "2 of 5" position under it.
 * Follows the WAI-ARIA carousel pattern: the whole is a group with aria-roledescription "carousel", each card a
 * group "slide" labelled "n of N: title". The buttons use aria-disabled at the ends (they keep the focus) and are
 * hidden when every card fits.
 */
export function renderCarousel(items: CardBody[], renderCard: (item: CardBody) => HTMLElement): HTMLElement {
  const total = items.length
  const slides = items.map((item, i) => {
    const card = renderCard(item)
    card.setAttribute('role', 'group')
    card.setAttribute('aria-roledescription', 'slide')
    card.setAttribute('aria-label', `${i + 1} of ${total}: ${typeof item.title === 'string' ? item.title : ''}`)
    return card
  })
  const track = h('div', { class: 'pw-carousel', attrs: { role: 'group', 'aria-label': 'Cards (scroll sideways)', tabindex: '0' } }, slides)
  const position = h('span', { class: 'pw-carousel-position', attrs: { 'aria-hidden': 'true' } })
  const prev = h('button', { class: 'pw-carousel-arrow pw-carousel-prev', text: '‹', attrs: { type: 'button', 'aria-label': 'Previous card' } })
  const next = h('button', { class: 'pw-carousel-arrow pw-carousel-next', text: '›', attrs: { type: 'button', 'aria-label': 'Next card' } })
  const controls = h('div', { class: 'pw-carousel-controls' }, [prev, position, next])
  const root = h('div', {
    class: 'pw-carousel-wrap',
    attrs: { role: 'group', 'aria-roledescription': 'carousel', 'aria-label': `${total} ${total === 1 ? 'card' : 'cards'}` },
  }, [track, controls])

  /** The card at the row's left edge (the one scroll-snap aligns). */
  const current = (): number => {
    const left = track.scrollLeft
    let best = 0
    slides.forEach((slide, i) => {
      if (Math.abs(slide.offsetLeft - left) < Math.abs(slides[best]!.offsetLeft - left)) best = i
    })
    return best
  }
  const atEnd = () => track.scrollLeft + track.clientWidth >= track.scrollWidth - 2
  const update = () => {
    const overflow = track.scrollWidth > track.clientWidth + 2
    controls.hidden = !overflow
    const index = current()
    const first = track.scrollLeft <= 2
    const last = atEnd()
    prev.setAttribute('aria-disabled', String(first))
    next.setAttribute('aria-disabled', String(last))
    // Cards wholly in view: "1–2 of 5" on a wide screen, "2 of 5" on a phone.
    const inView = slides.filter((s) => s.offsetLeft >= track.scrollLeft - 2 && s.offsetLeft + s.offsetWidth <= track.scrollLeft + track.clientWidth + 2).length
    const from = last ? Math.max(1, total - Math.max(inView, 1) + 1) : index + 1
    const to = Math.min(total, from + Math.max(inView, 1) - 1)
    position.textContent = from === to ? `${from} of ${total}` : `${from}–${to} of ${total}`
  }
  const go = (step: 1 | -1) => {
    if ((step < 0 && track.scrollLeft <= 2) || (step > 0 && atEnd())) return
    const target = slides[Math.max(0, Math.min(total - 1, current() + step))]
    if (!target) return
    track.scrollTo({ left: target.offsetLeft, behavior: 'auto' })
  }
  prev.addEventListener('click', () => go(-1))
  next.addEventListener('click', () => go(1))
  let frame = 0
  const schedule = () => {
    if (frame) return
    frame = requestAnimationFrame(() => {
      frame = 0
      update()
    })
  }
  track.addEventListener('scroll', schedule, { passive: true })
  // Sizes are known once the card is in the page (and change with the window and with images loading).
  if (typeof ResizeObserver === 'function') new ResizeObserver(schedule).observe(track)
  track.addEventListener('load', schedule, true)
  controls.hidden = true
  return root
}
