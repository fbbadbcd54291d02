/// <reference lib="dom" />
/**
 * The only way the webchat creates DOM: elements by tag name, text through text nodes, attributes one by one.
 * There is no innerHTML anywhere in the bundle (the page's CSP also enforces Trusted Types, so any HTML sink
 * would throw).
 */

export type Child = Node | string | number | null | undefined | false

export interface Props {
  class?: string
  text?: string
  attrs?: Record<string, string | undefined>
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, children: Child[] = []): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  if (props.class) el.className = props.class
  if (props.text !== undefined) el.textContent = props.text
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value !== undefined) el.setAttribute(name, value)
  }
  for (const [type, listener] of Object.entries(props.on ?? {})) {
    el.addEventListener(type, listener as EventListener)
  }
  append(el, children)
  return el
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child)
  }
}

/** Text only screen readers get. */
export function srOnly(text: string): HTMLSpanElement {
  return h('span', { class: 'pw-sr-only', text })
}

let nextId = 0
export function uniqueId(prefix: string): string {
  nextId++
  return `${prefix}-${nextId}`
}

const ICONS = {
  file: 'M6 2h8l6 6v14H6z M14 2v6h6',
  pin: 'M12 22s7-7.5 7-13a7 7 0 1 0-14 0c0 5.5 7 13 7 13z M12 11.5a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5z',
} as const

/** A small decorative SVG icon (hidden from screen readers; the text next to it says what it is). */
export function icon(name: keyof typeof ICONS): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg'
  const svg = document.createElementNS(ns, 'svg')
  for (const [k, v] of Object.entries({ viewBox: '0 0 24 24', width: '18', height: '18', fill: 'none', stroke: 'currentColor', 'stroke-width': '2', 'stroke-linejoin': 'round', 'aria-hidden': 'true', focusable: 'false', class: 'pw-icon' })) {
    svg.setAttribute(k, v)
  }
  const path = document.createElementNS(ns, 'path')
  path.setAttribute('d', ICONS[name])
  svg.appendChild(path)
  return svg
}
