/// <reference lib="dom" />
import { h } from './dom.js'

/** One source of an answer (`metadata.citations` of the bot's message; docs/bot-code.md "knowledge"). */
interface Citation {
  key: string
  pageNumber?: number
  quote?: string
}

const MAX_SHOWN = 10

/** The message's citations as far as they can be shown (a key each), or none. */
export function citationsOf(metadata: unknown): Citation[] {
  const list = typeof metadata === 'object' && metadata !== null ? (metadata as { citations?: unknown }).citations : undefined
  if (!Array.isArray(list)) return []
  return list.slice(0, MAX_SHOWN).filter((c): c is Citation => typeof c === 'object' && c !== null && typeof (c as Citation).key === 'string')
}

/**
 * The text of an answer with citations, without the `Sources: …` paragraph the bot ends it with for clients that do
 * not read the metadata: the sources are shown under the bubble instead.
 */
export function withoutSourcesLine(text: string): string {
  const at = text.lastIndexOf('\n\nSources: ')
  return at >= 0 && !text.slice(at + 2).includes('\n') ? text.slice(0, at) : text
}

/** The sources under an answer: each file (and page), its quote behind a disclosure. All text, never markup. */
export function renderSources(citations: Citation[]): HTMLElement {
  return h('div', { class: 'pw-sources', attrs: { role: 'group', 'aria-label': 'Sources' } }, [
    h('span', { class: 'pw-sources-label', text: 'Sources' }),
    h('ol', { class: 'pw-sources-list' }, citations.map((c) => {
      const name = c.key + (typeof c.pageNumber === 'number' ? `, page ${c.pageNumber}` : '')
      return h('li', { class: 'pw-source' }, [
        typeof c.quote === 'string' && c.quote !== ''
          ? h('details', {}, [h('summary', { text: name }), h('p', { class: 'pw-source-quote', text: c.quote })])
          : h('span', { text: name }),
      ])
    })),
  ])
}
