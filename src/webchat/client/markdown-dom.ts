/// <reference lib="dom" />
import type { Block, Inline } from '../shared/markdown.js'
import { parseMarkdown } from '../shared/markdown.js'
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

function inlines<E extends HTMLElement>(parent: E, nodes: Inline[]): E {
  for (const node of nodes) parent.appendChild(renderInline(node))
  return parent
}

function renderInline(node: Inline): Node {
  switch (node.t) {
    case 'text':
      return document.createTextNode(node.v)
    case 'br':
      return h('br')
    case 'code':
      return h('code', { text: node.v })
    case 'strong':
      return inlines(h('strong'), node.c)
    case 'em':
      return inlines(h('em'), node.c)
    case 'del':
      return inlines(h('del'), node.c)
    case 'link':
      if (!node.href) return inlines(h('span'), node.c)
      return inlines(h('a', { attrs: { href: node.href, target: '_blank', rel: 'noopener noreferrer' } }), node.c)
    case 'img':
      if (!node.src) return document.createTextNode(node.alt)
      return h('img', { class: 'pw-md-img', attrs: { src: node.src, alt: node.alt, loading: 'lazy', referrerpolicy: 'no-referrer' } })
  }
}
