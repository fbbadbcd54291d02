/// <reference lib="dom" />
import { h } from './dom.js'

/**
 * The image lightbox: an image of a message, clicked (or Enter/Space on it), opens large in a modal <dialog>
 * labelled with the image's description. Escape, the Close button or a click outside the image closes it, and the
 * focus goes back to the image that opened it. The dialog also links to the original in a new tab.
 */
let dialog: HTMLDialogElement | undefined
let picture: HTMLImageElement
let caption: HTMLElement
let original: HTMLAnchorElement
let opener: HTMLElement | undefined

function build(): HTMLDialogElement {
  picture = h('img', { class: 'pw-lightbox-image', attrs: { alt: '', referrerpolicy: 'no-referrer' } })
  caption = h('p', { class: 'pw-lightbox-title', attrs: { id: 'pw-lightbox-title' } })
  original = h('a', { class: 'pw-lightbox-link', text: 'Open original', attrs: { target: '_blank', rel: 'noopener noreferrer' } })
  const close = h('button', { class: 'pw-lightbox-close', text: '×', attrs: { type: 'button', 'aria-label': 'Close image' } })
  const el = h('dialog', { class: 'pw-lightbox', attrs: { 'aria-labelledby': 'pw-lightbox-title' } }, [
    h('div', { class: 'pw-lightbox-bar' }, [caption, original, close]),
    h('div', { class: 'pw-lightbox-stage' }, [picture]),
  ])
  close.addEventListener('click', () => el.close())
  // A click on the dark area around the picture (the dialog or the stage itself) closes too.
  el.addEventListener('click', (event) => {
    const target = event.target as HTMLElement
    if (target === el || target.classList.contains('pw-lightbox-stage')) el.close()
  })
  el.addEventListener('close', () => {
    picture.removeAttribute('src')
    const back = opener
    opener = undefined
    if (back?.isConnected) back.focus()
  })
  document.body.appendChild(el)
  return el
}

export function openLightbox(src: string, alt: string, from: HTMLElement): void {
  dialog ??= build()
  if (dialog.open) dialog.close()
  opener = from
  picture.src = src
  picture.alt = alt
  caption.textContent = alt
  original.href = src
  original.setAttribute('aria-label', `Open original of ${alt} (opens in a new tab)`)
  dialog.showModal()
}

/** An image of a message as a button that opens it in the lightbox. */
export function zoomableImage(src: string, alt: string, imageClass: string): HTMLElement {
  const button = h('button', {
    class: 'pw-image-button',
    attrs: { type: 'button', 'aria-haspopup': 'dialog', 'aria-label': `${alt} (enlarge)` },
  }, [h('img', { class: imageClass, attrs: { src, alt, loading: 'lazy', referrerpolicy: 'no-referrer' } })])
  button.addEventListener('click', () => openLightbox(src, alt, button))
  return button
}
