/// <reference lib="dom" />
import type { Block, Inline } from '../shared/markdown.js'
import { parseMarkdown } from '../shared/markdown.js'
import { zoomableImage } from './lightbox.js'
import { h } from './dom.js'

/** Markdown → DOM nodes. Text goes through text nodes; links and images only carry URLs safeUrl accepted. */
export function renderMarkdown(source: string): HTMLElement {
  const root = h('div', { class: 'pw-markdown' })
  for (const block of parseMarkdown(source)) root.appendChild(renderBlock(block))
  return root
}

function renderBlock(block: Block): Node {
  switch (block.t) {
    case 'p':
      return inlines(h('p'), block.c)
    case 'h':
      // Headings inside a message are not page structure: styled paragraphs keep the page outline clean.
      return inlines(h('p', { class: `pw-md-h pw-md-h${block.level}` }), block.c)
    case 'ul':
      return h('ul', {}, block.items.map((item) => inlines(h('li'), item)))
    case 'ol':
      return h('ol', { attrs: block.start !== 1 ? { start: String(block.start) } : {} }, block.items.map((item) => inlines(h('li'), item)))
    case 'quote': {
      const quote = h('blockquote')
      for (const child of block.c) quote.appendChild(renderBlock(child))
      return quote
    }
    case 'pre':
      return h('pre', {}, [h('code', { text: block.v })])
    case 'hr':
      return h('hr')
  }
}

/** `inLink`: inside a link, where an image stays a plain image (no button inside a link). */
function inlines<E extends HTMLElement>(parent: E, nodes: Inline[], inLink = false): E {
  for (const node of nodes) parent.appendChild(renderInline(node, inLink))
  return parent
}

function renderInline(node: Inline, inLink: boolean): Node {
  switch (node.t) {
    case 'text':
      return document.createTextNode(node.v)
    case 'br':
      return h('br')
    case 'code':
      return h('code', { text: node.v })
    case 'strong':
      return inlines(h('strong'), node.c, inLink)
    case 'em':
      return inlines(h('em'), node.c, inLink)
    case 'del':
      return inlines(h('del'), node.c, inLink)
    case 'link':
      if (!node.href) return inlines(h('span'), node.c, inLink)
      return inlines(h('a', { attrs: { href: node.href, target: '_blank', rel: 'noopener noreferrer' } }), node.c, true)
    case 'img':
      if (!node.src) return document.createTextNode(node.alt)
      if (inLink) return h('img', { class: 'pw-md-img', attrs: { src: node.src, alt: node.alt, loading: 'lazy', referrerpolicy: 'no-referrer' } })
      return zoomableImage(node.src, node.alt || 'Image', 'pw-md-img')
  }
}
