/** The banner's "Knowledge search" line (src/config.ts knowledgeLabel): each signal, and no credentials of an endpoint's URL. */
import { expect, it } from 'vitest'
import { knowledgeLabel } from '../../src/config.js'

it('names the signal in use; an endpoint by its origin only (no user, password or path)', () => {
  const embeddings = { url: 'https://user:secret@embed.example:8443/v1', model: 'nomic-embed-text' } as never
  expect(knowledgeLabel({ embeddings, kbSentenceModel: true, kbWordVectors: true })).toBe('lexical + embeddings endpoint https://embed.example:8443 (model nomic-embed-text)')
  expect(knowledgeLabel({ embeddings: undefined, kbSentenceModel: true, kbWordVectors: true })).toMatch(/built-in sentence model/)
  expect(knowledgeLabel({ embeddings: undefined, kbSentenceModel: false, kbWordVectors: true })).toMatch(/built-in word vectors/)
  expect(knowledgeLabel({ embeddings: undefined, kbSentenceModel: false, kbWordVectors: false })).toBe('lexical only')
})
