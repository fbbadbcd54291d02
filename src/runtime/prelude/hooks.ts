/*
 * The ctx user code gets (event, client, actions, state), the hooks, and the outgoing path they run around:
 * beforeOutgoing → host createMessage → afterOutgoing.
 */
import { hostCall, safePreview } from './host.js'
import { freeze, jsonParse, jsonStringify } from './intrinsics.js'
import { makeClient } from './client.js'
import { fail, nestedBudget, remainingMs, unit } from './run.js'
import { bot, stateOf } from './state.js'
import type { Json, Run } from './types.js'
import { errText, isObj, isPayload, jsonClone, newId, setOwn } from './util.js'

const MAX_OUTGOING_DEPTH = 3
/** Nesting depth of outgoing events (sends made from outgoing hooks), to stop send → hook → send loops. */
const outgoingDepth = new WeakMap<object, number>()

export function makeActions(rt: Run, event: Json): Json {
  const out: Json = {}
  for (const [name, fn] of bot.actions) {
    setOwn(out, name, async (input?: unknown) => {
      const ctx = makeCtx(rt, event)
      nestedBudget(rt)
      return await fn(ctx, input)
    })
  }
  return freeze(out)
}

export function makeCtx(rt: Run, event: Json): Json {
  return { event, client: makeClient(event, (args) => sendMessage(rt, event, args, false), () => remainingMs(rt)), actions: makeActions(rt, event), state: stateOf(rt, event), handledByWorkflow: rt.handled }
}

export function isStop(result: unknown): boolean {
  try {
    return isObj(result) && result.stop === true
  } catch {
    return false
  }
}

/** Runs a hook if the bot defines it; errors are recorded, never thrown. */
export async function runHook(rt: Run, name: string, event: Json, nested: boolean): Promise<{ ok: boolean; result?: unknown }> {
  const fn = bot.hooks.get(name)
  if (fn === undefined) return { ok: true }
  try {
    const ctx = makeCtx(rt, event)
    let result: unknown
    if (nested) {
      nestedBudget(rt)
      result = await fn(ctx)
    } else result = await unit(rt, () => fn(ctx))
    return { ok: true, result }
  } catch (err) {
    fail(rt, 'hooks.' + name, err)
    return { ok: false }
  }
}

/** The event of a message on its way out, as the outgoing hooks see it (`depth`: sends nested in outgoing hooks). */
function outgoingEvent(base: Json, conversationId: string, payload: Json, depth: number): Json {
  const tags = isObj(base.tags) ? base.tags : {}
  const out: Json = {
    botId: base.botId,
    conversationId,
    createdOn: new Date().toISOString(),
    direction: 'outgoing',
    id: newId(),
    integration: base.integration,
    messageId: undefined,
    payload,
    preview: safePreview(payload),
    state: base.state,
    tags: { conversation: isObj(tags.conversation) ? tags.conversation : {}, message: {}, user: isObj(tags.user) ? tags.user : {} },
    type: payload.type,
    userId: undefined,
  }
  if (base.trigger !== undefined) out.trigger = base.trigger
  outgoingDepth.set(out, depth)
  return out
}

/**
 * client.createMessage (and say cards): beforeOutgoing → host createMessage → afterOutgoing.
 * `topLevel` is true for sends made by the runtime (cards), false for sends made by user code.
 */
export async function sendMessage(rt: Run, base: Json, args: Json, topLevel: boolean): Promise<unknown> {
  let payload: unknown = args.payload
  if (typeof args.type === 'string' && isObj(payload) && typeof payload.type !== 'string') payload = { type: args.type, ...payload }
  if (!isPayload(payload)) throw new Error('client.createMessage: payload must be an object with a string `type`, e.g. { type: "text", text: "hi" }')
  payload = jsonClone(payload)
  const conversationId = args.conversationId === undefined ? base.conversationId : args.conversationId
  if (typeof conversationId !== 'string' || conversationId === '') throw new Error('client.createMessage: conversationId must be a non-empty string')
  const depth = (outgoingDepth.get(base) ?? 0) + 1
  if (depth > MAX_OUTGOING_DEPTH) throw new Error('client.createMessage: messages sent from outgoing hooks are nested more than ' + MAX_OUTGOING_DEPTH + ' deep')

  // The outgoing event the outgoing hooks see: built only for a bot that has one (most have none, and an id, a date and
  // a preview per message are a good part of a reply's time in the sandbox).
  const hasBefore = bot.hooks.has('beforeOutgoing')
  const hasAfter = bot.hooks.has('afterOutgoing')
  const out = hasBefore || hasAfter ? outgoingEvent(base, conversationId, payload as Json, depth) : undefined

  let final = payload as Json
  if (hasBefore && out) {
    const original = jsonClone(final)
    const before = await runHook(rt, 'beforeOutgoing', out, !topLevel)
    if (before.ok && isStop(before.result)) return { message: null }
    if (!before.ok) final = original
    else if (isPayload(out.payload)) {
      try {
        final = jsonClone(out.payload)
      } catch (err) {
        fail(rt, 'hooks.beforeOutgoing', new Error('event.payload is not JSON (' + errText(err) + '); the original payload was sent'))
        final = original
      }
    } else {
      fail(rt, 'hooks.beforeOutgoing', new Error('event.payload must be a message payload object with a string `type`; the original payload was sent'))
      final = original
    }
    out.payload = final
    out.type = final.type
    out.preview = safePreview(final)
  }

  const callArgs: Json = { conversationId, payload: final }
  if (args.metadata !== undefined) callArgs.metadata = args.metadata
  if (args.tags !== undefined) callArgs.tags = args.tags
  const result: unknown = jsonParse(await hostCall('createMessage', jsonStringify(callArgs)))
  if (!hasAfter || !out) return result
  const message = isObj(result) ? result.message : undefined
  if (isObj(message)) {
    if (typeof message.id === 'string') out.messageId = message.id
    if (typeof message.userId === 'string') out.userId = message.userId
    if (typeof message.createdAt === 'string') out.createdOn = message.createdAt
  }
  await runHook(rt, 'afterOutgoing', out, !topLevel)
  return result
}
