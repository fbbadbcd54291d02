import { errors } from '../lib/errors.js'
import { searchKnowledge } from '../domain/knowledge/knowledge-service.js'
import type { SemanticRanking } from '../domain/knowledge/embeddings/fusion.js'
import type { KnowledgeBaseRow } from '../store/knowledge-store.js'
import type { Store } from '../store/store.js'

/**
 * The host side of bot-code knowledge search (`client.searchKnowledge`, knowledge cards). Knowledge bases
 * are named by id or by name; none named means every knowledge base of the bot (or, when it has none,
 * every indexed file). The answer becomes the event's `kb` field in the sandbox: `included` lists the
 * knowledge bases queried, `results` the passages.
 */

export const KB_RESULTS = { default: 3, max: 10 }
const MAX_KBS = 20

export interface KbResult {
  content: string
  /** The ranking's score (relative: only the order means something). */
  score: number
  /** Absolute relevance in [0, 1] (src/domain/knowledge/relevance.ts), what the threshold compares. */
  relevance: number
  /** Heading path above the passage (document title › section). */
  title: string
  fileId: string
  fileKey: string
  /** The passage's id (a citation's `passageId`). */
  passageId: string
  position: number
  pageNumber?: number
}

export interface KbAnswer {
  included: { id: string; name: string }[]
  /** Passages of relevance ≥ the threshold, best first. */
  results: KbResult[]
  /** True when no passage reached the threshold: the bot should say it does not know rather than answer with noise. */
  noAnswer: boolean
  /** The threshold applied (PARLEY_KB_MIN_SCORE, or the call's `minScore`). */
  minScore: number
}

async function resolveKnowledgeBases(store: Store, botId: string, refs: unknown): Promise<KnowledgeBaseRow[] | undefined> {
  const all = async () => {
    const out: KnowledgeBaseRow[] = []
    let after: string | undefined
    do {
      const page = await store.knowledge.listKnowledgeBases(botId, undefined, { after, limit: 100 })
      out.push(...page.items)
      after = page.next
    } while (after && out.length < 1000)
    return out
  }
  if (refs === undefined || refs === null) {
    const kbs = await all()
    return kbs.length > 0 ? kbs : undefined
  }
  if (!Array.isArray(refs) || refs.length > MAX_KBS || refs.some((r) => typeof r !== 'string' || r === '')) {
    throw errors.invalidPayload(`knowledgeBases must be an array of at most ${MAX_KBS} knowledge base ids or names`)
  }
  let named: KnowledgeBaseRow[] | undefined
  const out: KnowledgeBaseRow[] = []
  for (const ref of refs as string[]) {
    let kb = await store.knowledge.getKnowledgeBase(botId, ref)
    if (!kb) kb = (named ??= await all()).find((k) => k.name === ref)
    if (!kb) throw errors.notFound('Knowledge base', ref)
    if (!out.some((k) => k.id === kb.id)) out.push(kb)
  }
  return out
}

/**
 * A bot's knowledge search. `minScore` is the relevance threshold (PARLEY_KB_MIN_SCORE; bot code may pass its own
 * `minScore`, 0 to 1, with the call): passages below it are left out, and `noAnswer` says none was good enough.
 */
export async function searchForBot(store: Store, botId: string, args: Record<string, unknown>, now: number, semantic?: SemanticRanking, minScore = 0): Promise<KbAnswer> {
  return (await searchForBotScored(store, botId, args, now, semantic, minScore)).answer
}

/** searchForBot, and the best relevance among all the hits (null when there was none): what the runtime records of a search. */
export async function searchForBotScored(store: Store, botId: string, args: Record<string, unknown>, now: number, semantic?: SemanticRanking, minScore = 0): Promise<{ answer: KbAnswer; bestRelevance: number | null }> {
  if (typeof args.query !== 'string') throw errors.invalidPayload('query must be a string')
  const limit = args.limit === undefined ? KB_RESULTS.default : Number(args.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > KB_RESULTS.max) throw errors.invalidPayload(`limit must be an integer from 1 to ${KB_RESULTS.max}`)
  const threshold = args.minScore === undefined || args.minScore === null ? minScore : Number(args.minScore)
  if (typeof args.minScore === 'boolean' || !Number.isFinite(threshold) || threshold < 0 || threshold > 1) throw errors.invalidPayload('minScore must be a number from 0 to 1')
  const kbs = await resolveKnowledgeBases(store, botId, args.knowledgeBases)
  const hits = await searchKnowledge(store.knowledge, botId, { query: args.query, knowledgeBaseIds: kbs?.map((k) => k.id), limit }, now, semantic)
  const results = hits.filter((h) => h.relevance >= threshold).map((h) => ({
    content: h.content, score: h.score, relevance: h.relevance, title: h.title, fileId: h.fileId, fileKey: h.file.key, passageId: h.id, position: h.position,
    ...(h.meta.pageNumber !== undefined && { pageNumber: h.meta.pageNumber }),
  }))
  return {
    answer: { included: (kbs ?? []).map((k) => ({ id: k.id, name: k.name })), results, noAnswer: results.length === 0, minScore: threshold },
    bestRelevance: hits.length === 0 ? null : Math.max(...hits.map((h) => h.relevance)),
  }
}
