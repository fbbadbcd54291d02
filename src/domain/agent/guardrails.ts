/**
 * A bot's guardrails (issue #29 item 5; docs/bot-code.md "Guardrails"): what every model call made for its knowledge
 * answers and agent cards is given, from the bot module's `guardrails` export. They are instructions to the model and a
 * cut of its answer: a model may still not follow an instruction, so the docs promise no more than that. Only the
 * length is enforced by Parley itself.
 */
export interface Guardrails {
  /** Instructions every model call of the bot gets first (tone, persona, what it must never say). */
  instructions?: string
  /** Topics the model is told to decline (politely, saying it cannot help with that). */
  refuse?: string[]
  /** The longest answer sent, in characters: the model is told, asked for no more tokens than that, and cut at it. */
  maxAnswerChars?: number
}

export const GUARDRAIL_LIMITS = { instructionsChars: 4000, topics: 50, topicChars: 200, maxAnswerChars: 20_000 }

/** The guardrails as bot code gave them, checked (the host reads them from the sandbox: nothing is trusted). */
export function readGuardrails(raw: unknown): Guardrails {
  if (typeof raw !== 'object' || raw === null) return {}
  const g = raw as Record<string, unknown>
  const out: Guardrails = {}
  if (typeof g.instructions === 'string' && g.instructions.trim() !== '') out.instructions = g.instructions.slice(0, GUARDRAIL_LIMITS.instructionsChars)
  if (Array.isArray(g.refuse)) {
    const topics = g.refuse.filter((t): t is string => typeof t === 'string' && t.trim() !== '').slice(0, GUARDRAIL_LIMITS.topics).map((t) => t.slice(0, GUARDRAIL_LIMITS.topicChars))
    if (topics.length > 0) out.refuse = topics
  }
  if (typeof g.maxAnswerChars === 'number' && Number.isInteger(g.maxAnswerChars) && g.maxAnswerChars > 0) out.maxAnswerChars = Math.min(g.maxAnswerChars, GUARDRAIL_LIMITS.maxAnswerChars)
  return out
}

/** The system prompt's opening lines for these guardrails (empty when there are none). */
export function guardrailPrompt(g: Guardrails): string[] {
  const lines: string[] = []
  if (g.instructions) lines.push(g.instructions)
  if (g.refuse) lines.push(`Do not discuss these topics; if asked about them, say politely that you cannot help with that: ${g.refuse.join('; ')}.`)
  if (g.maxAnswerChars) lines.push(`Keep every answer under ${g.maxAnswerChars} characters.`)
  return lines
}

/** The most tokens to ask for an answer of at most `chars` characters (a token is about 3-4 characters of text). */
export function tokensFor(chars: number | undefined, otherwise: number): number {
  return chars === undefined ? otherwise : Math.max(16, Math.min(otherwise, Math.ceil(chars / 3)))
}

/** The answer cut at `maxChars` (at the last sentence or word end before it, with an ellipsis). */
export function cutAnswer(text: string, maxChars: number | undefined): string {
  if (maxChars === undefined || text.length <= maxChars) return text
  const head = text.slice(0, Math.max(1, maxChars - 1))
  const sentence = Math.max(head.lastIndexOf('. '), head.lastIndexOf('! '), head.lastIndexOf('? '))
  if (sentence > maxChars / 2) return head.slice(0, sentence + 1)
  const word = head.lastIndexOf(' ')
  return `${(word > maxChars / 2 ? head.slice(0, word) : head).trimEnd()}…`
}
