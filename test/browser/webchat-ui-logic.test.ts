import { describe, expect, it } from 'vitest'
import { readReplyMetadata, replyMetadata, resolveAnswers } from '../../src/webchat/shared/answers.js'
import type { Message, MessagePayload } from '../../src/webchat/shared/types.js'

/** The logic behind the webchat's interactive parts (no browser needed). */

let clock = 0
const msg = (id: string, userId: string, payload: MessagePayload, metadata?: Record<string, unknown>): Message => ({
  id, userId, conversationId: 'c', createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString(), payload, ...(metadata && { metadata }),
})
const choice = (id: string, options: [string, string][]) => msg(id, 'bot', { type: 'choice', text: 'Pick', options: options.map(([label, value]) => ({ label, value })) })
const say = (id: string, text: string, metadata?: Record<string, unknown>) => msg(id, 'me', { type: 'text', text }, metadata)

describe('answered choices', () => {
  it('a reply sent from a choice answers it, with the label shown', () => {
    const { choices, labels } = resolveAnswers([choice('q', [['Red', 'r'], ['Blue', 'b']]), say('a', 'b', replyMetadata('Blue', 'q'))], 'me')
    expect([...choices]).toEqual([['q', 1]])
    expect([...labels]).toEqual([['a', 'Blue']])
  })

  it('a typed reply answers the open choice only when it is one of its values', () => {
    const { choices, labels } = resolveAnswers([choice('q', [['Red', 'r']]), say('a', 'what?'), say('b', 'r')], 'me')
    expect([...choices]).toEqual([['q', 0]])
    expect([...labels]).toEqual([['b', 'Red']])
  })

  it('a choice is answered once; an older one can still be answered from its buttons', () => {
    const messages = [choice('q1', [['A', 'a']]), choice('q2', [['A', 'a'], ['B', 'b']]), say('x', 'a'), say('y', 'a', replyMetadata('A', 'q1')), say('z', 'b')]
    const { choices } = resolveAnswers(messages, 'me')
    expect(choices.get('q2')).toBe(0) // typed `a` answers the latest choice
    expect(choices.get('q1')).toBe(0) // from its own button
    expect(choices.size).toBe(2) // `z` answers nothing: q2 was already answered
  })

  it('with the same value twice, the label picked wins; messages of others and answers of unknown choices are left alone', () => {
    const q = choice('q', [['One', 'v'], ['Two', 'v']])
    expect(resolveAnswers([q, say('a', 'v', replyMetadata('Two', 'q'))], 'me').choices.get('q')).toBe(1)
    expect(resolveAnswers([q, msg('o', 'other', { type: 'text', text: 'v' })], 'me').choices.size).toBe(0)
    const { choices, labels } = resolveAnswers([say('a', 'v', replyMetadata('Shown', 'gone'))], 'me')
    expect(choices.size).toBe(0)
    expect(labels.get('a')).toBe('Shown')
  })

  it('reads only well-formed webchat metadata', () => {
    expect(readReplyMetadata({ metadata: { webchat: { replyTo: 'q', label: 'L' } } })).toEqual({ replyTo: 'q', label: 'L' })
    expect(readReplyMetadata({ metadata: { webchat: { replyTo: 1, label: '' } } })).toEqual({})
    expect(readReplyMetadata({ metadata: { webchat: 'x' } })).toEqual({})
    expect(readReplyMetadata({})).toEqual({})
  })
})
