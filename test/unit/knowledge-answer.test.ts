/**
 * The text side of knowledge answers (src/domain/knowledge/knowledge-answer.ts): the prompt's numbered passages, and the
 * model's [n] markers turned into citations (taken out of the text; a number naming no passage stays as written).
 */
import { describe, expect, it } from 'vitest'
import { citedPassages, passagesPrompt } from '../../src/domain/knowledge/knowledge-answer.js'

describe('knowledge answers: prompt and citations', () => {
  it('numbers the passages with their file (and page) before the question', () => {
    const prompt = passagesPrompt('When?', [
      { content: 'Opens at ten.', fileId: 'f1', fileKey: 'museum.md' },
      { content: 'Cafe until five.', fileId: 'f2', fileKey: 'guide.pdf', pageNumber: 3 },
    ])
    expect(prompt).toBe('Passages:\n[1] (museum.md) Opens at ten.\n\n[2] (guide.pdf, page 3) Cafe until five.\n\nQuestion: When?')
  })

  it('takes the markers out, in order of first mention, once each; a number naming no passage is left as written', () => {
    expect(citedPassages('Opens at ten [2]. The cafe closes at five [1][2].', 2)).toEqual({ text: 'Opens at ten. The cafe closes at five.', cited: [1, 0] })
    expect(citedPassages('See [3] and [0].', 2)).toEqual({ text: 'See [3] and [0].', cited: [] })
    expect(citedPassages('No markers here.', 2)).toEqual({ text: 'No markers here.', cited: [] })
    expect(citedPassages('Réponse : dix heures [1] !', 1)).toEqual({ text: 'Réponse : dix heures !', cited: [0] })
  })
})
