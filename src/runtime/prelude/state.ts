/* What runs read: the bot load() kept, and the event's state and workflow variables. */
import { fail } from './run.js'
import type { Bot, Json, Run, Scope } from './types.js'
import { isObj } from './util.js'

/** The loaded bot (load() replaces it). */
export let bot: Bot = { hooks: new Map(), actions: new Map(), actionInfo: new Map(), flows: new Map() }

export function setBot(loaded: Bot): void {
  bot = loaded
}

export function stateOf(rt: Run, event: Json): Json {
  if (!isObj(event.state)) {
    fail(rt, 'event.state', new Error('must stay an object; it was reset to empty user, conversation and bot objects'))
    event.state = { user: {}, conversation: {}, bot: {} }
  }
  return event.state
}

export function varsOf(rt: Run, event: Json): Json {
  const state = stateOf(rt, event)
  if (!isObj(state.workflow)) state.workflow = {}
  return state.workflow
}

export function scopeOf(rt: Run, event: Json): Scope {
  const vars = varsOf(rt, event)
  return { event, state: event.state, vars }
}
