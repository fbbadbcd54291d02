import type { Message, Option } from './types.js'

/**
 * Answered choices. A choice or dropdown is answered by the user's next message: the webchat sends the option's
 * value as a text message (what Botpress does: the bot reads the value), with
 * `metadata: { webchat: { replyTo: <the choice's message id>, label: <the option's label> } }` so that the page,
 * on this visit or a later one, can show the label in the user's bubble and disable the answered choice.
 * Messages sent by other clients (`parley chat`, an SDK) carry no metadata: a text equal to an option's value of
 * the choice just before it counts as that option.
 */

/** What the webchat puts in a message's metadata when the user picks something. */
export type ReplyMetadata = { webchat: { replyTo?: string; label: string } }

export function replyMetadata(label: string, replyTo?: string): ReplyMetadata {
  return { webchat: { label, ...(replyTo !== undefined && { replyTo }) } }
}

/** The webchat metadata of a message, when it has a well-formed one. */
export function readReplyMetadata(message: Pick<Message, 'metadata'>): { replyTo?: string; label?: string } {
  const webchat = (message.metadata as { webchat?: unknown } | undefined)?.webchat
  if (!webchat || typeof webchat !== 'object') return {}
  const { replyTo, label } = webchat as { replyTo?: unknown; label?: unknown }
  return { ...(typeof replyTo === 'string' && { replyTo }), ...(typeof label === 'string' && label !== '' && { label }) }
}

export interface Answers {
  /** Choice/dropdown message id → the index of the option picked (-1: answered with something else). */
  choices: Map<string, number>
  /** The user's message id → the label to show instead of its text. */
  labels: Map<string, string>
}

const optionsOf = (m: Message): Option[] | undefined =>
  (m.payload.type === 'choice' || m.payload.type === 'dropdown') && Array.isArray(m.payload.options) ? m.payload.options : undefined

/**
 * One pass over the conversation, oldest first: which choices the user (`me`) has answered, with which option,
 * and which of the user's messages show a label.
 */
export function resolveAnswers(messages: readonly Message[], me: string | undefined): Answers {
  const choices = new Map<string, number>()
  const labels = new Map<string, string>()
  const byId = new Map<string, Message>()
  /** The latest choice of someone else not yet answered (a plain reply can answer only that one). */
  let open: Message | undefined
  for (const m of messages) {
    byId.set(m.id, m)
    if (m.userId !== me) {
      if (optionsOf(m)) open = m
      continue
    }
    const meta = readReplyMetadata(m)
    const text = m.payload.type === 'text' && typeof m.payload.text === 'string' ? m.payload.text : undefined
    if (meta.label !== undefined) labels.set(m.id, meta.label)
    const target = meta.replyTo !== undefined ? byId.get(meta.replyTo) : open
    const options = target && optionsOf(target)
    if (!target || !options || choices.has(target.id)) continue
    const index = Math.max(
      options.findIndex((o) => o.value === text && (meta.label === undefined || o.label === meta.label)),
      options.findIndex((o) => o.value === text),
    )
    // A message sent from the choice itself always answers it; a typed one only when it is one of its values.
    if (meta.replyTo === undefined && index < 0) continue
    choices.set(target.id, index)
    if (!labels.has(m.id) && index >= 0 && typeof options[index]!.label === 'string' && options[index]!.label !== '') labels.set(m.id, options[index]!.label)
    if (target === open) open = undefined
  }
  return { choices, labels }
}
