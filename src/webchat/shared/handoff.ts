/**
 * Human handoff in the webchat (README "Human handoff"). A person's messages in a handed-off conversation are
 * ordinary messages whose metadata says who wrote them: `metadata.handoff = { agent: { name, avatarUrl? }, event? }`.
 * With `event` ('joined' | 'left') the message is a system line ("Ada joined the conversation"); its payload is a
 * plain text message, so any Chat API client (the official @botpress/chat too) shows it as text.
 */
import type { Message } from './types.js'

export interface AgentInfo { name: string; avatarUrl?: string; event?: 'joined' | 'left' }

/** The agent behind a message, or undefined for the bot's and users' messages (and malformed metadata). */
export function agentOf(message: Pick<Message, 'metadata'>): AgentInfo | undefined {
  const handoff = (message.metadata as { handoff?: unknown } | undefined)?.handoff
  if (typeof handoff !== 'object' || handoff === null) return undefined
  const { agent, event } = handoff as { agent?: unknown; event?: unknown }
  if (typeof agent !== 'object' || agent === null) return undefined
  const { name, avatarUrl } = agent as { name?: unknown; avatarUrl?: unknown }
  if (typeof name !== 'string' || name.trim() === '') return undefined
  return {
    name: name.slice(0, 100),
    ...(typeof avatarUrl === 'string' && { avatarUrl }),
    ...((event === 'joined' || event === 'left') && { event }),
  }
}

/** The initials shown when an agent has no avatar picture (at most two letters). */
export function initialsOf(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean)
  const letters = words.length > 1 ? [words[0]!, words[words.length - 1]!].map((w) => Array.from(w)[0]) : Array.from(words[0] ?? '?').slice(0, 1)
  return letters.join('').toUpperCase()
}
