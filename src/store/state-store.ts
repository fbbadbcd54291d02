import type { NewRuntimeEvent } from './runtime-event-store.js'
import type { JsonObject } from './rows.js'

/**
 * Runtime API states (migrations/<dialect>/0007_runtime_state.sql) and the bot definition's state
 * declarations. A state is keyed by (bot, type, resource id, name). With an expiry it lives until
 * `expiresAt` (last write + expiry): from then on readers do not see it, and whoever removes it
 * (the sweep, or a write finding it expired) queues its state_expired event in the same transaction,
 * so that every expired state produces its event exactly once.
 */
export type StateType = 'conversation' | 'user' | 'bot' | 'integration' | 'workflow'

export interface StateDefinitionsRow {
  botId: string
  /** `{ [name]: { type, schema, expiry? } }` as declared. */
  definitions: JsonObject
  /** Changes on every update (compiled schemas are cached per version). */
  version: number
  updatedAt: number
}

export interface StateKey { botId: string; type: StateType; resourceId: string; name: string }

export interface RuntimeStateRow extends StateKey {
  id: string
  payload: JsonObject
  /** Idle milliseconds after which the state expires; null: never. */
  expiry: number | null
  expiresAt: number | null
  createdAt: number
  updatedAt: number
}

/**
 * A write. `set` replaces the payload (creating the state), `patch` merges the payload's top-level
 * keys into the live state's (nothing when there is none), `getOrSet` keeps a live state as it is
 * and creates it otherwise. `expiry`: a number or null sets it (null: never expires), undefined keeps
 * the state's own (`defaultExpiry` for a new state). `id` names a state the write creates.
 */
export interface StateWrite {
  mode: 'set' | 'patch' | 'getOrSet'
  id: string
  payload: JsonObject
  expiry?: number | null | undefined
  defaultExpiry: number | null
  now: number
}

/** The state_expired event of an expired state (the domain decides its shape). */
export type ExpiredEvent = (state: RuntimeStateRow) => NewRuntimeEvent

export interface StateStore {
  getDefinitions(botId: string): Promise<StateDefinitionsRow | undefined>
  /** Replaces the declarations; the version moves forward. */
  setDefinitions(botId: string, definitions: JsonObject, now: number): Promise<StateDefinitionsRow>
  /** The live (unexpired at `now`) state. */
  get(key: StateKey, now: number): Promise<RuntimeStateRow | undefined>
  /** undefined: `patch` found no live state. `created`: the write created the state. */
  write(key: StateKey, write: StateWrite, expired: ExpiredEvent): Promise<{ state: RuntimeStateRow; created: boolean } | undefined>
  /** Removes the state (setState with a null payload); false when there was no live one. */
  delete(key: StateKey, now: number, expired: ExpiredEvent): Promise<boolean>
  /** Sets a live state's expiry (from `now`; null: never); undefined when there is none. */
  setExpiry(key: StateKey, expiry: number | null, now: number): Promise<RuntimeStateRow | undefined>
  /** Removes up to `limit` states expired at `now`, queueing each one's event; returns them. Atomic across instances. */
  expireDue(now: number, limit: number, expired: ExpiredEvent): Promise<RuntimeStateRow[]>
}
