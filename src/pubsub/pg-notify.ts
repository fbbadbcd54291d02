import { createHash } from 'node:crypto'

/**
 * How Parley's notifications travel as PostgreSQL NOTIFY: shared by PostgresPubSub (publish, LISTEN)
 * and PostgresStore, which sends an append's notifications in the append's own statement.
 */

/**
 * NOTIFY payloads must stay under PostgreSQL's 8000-byte limit; we keep a margin. Messages are
 * ids and pokes, never bodies, so anything near this is a bug in the caller.
 */
export const MAX_NOTIFY_BYTES = 7900

/** Hashed names of the channels seen lately: a conversation's channel is named on every message. */
const channelNames = new Map<string, string>()
const MAX_CACHED_CHANNEL_NAMES = 10_000

/** A PostgreSQL channel name for any string: `parley_` + 40 hex digits of its SHA-256 (a valid, case-stable identifier under 63 bytes). */
export function pgChannelName(channel: string): string {
  let name = channelNames.get(channel)
  if (name === undefined) {
    name = `parley_${createHash('sha256').update(channel, 'utf8').digest('hex').slice(0, 40)}`
    if (channelNames.size >= MAX_CACHED_CHANNEL_NAMES) channelNames.clear()
    channelNames.set(channel, name)
  }
  return name
}

/** Throws for a message NOTIFY cannot carry (NUL, lone surrogates, over MAX_NOTIFY_BYTES): before anything is sent. */
export function checkNotifyMessage(message: string): void {
  if (message.includes('\u0000') || !message.isWellFormed()) {
    throw new TypeError('a pub/sub message cannot contain NUL or lone surrogates')
  }
  const bytes = Buffer.byteLength(message, 'utf8')
  if (bytes > MAX_NOTIFY_BYTES) {
    throw new RangeError(`pub/sub message is ${bytes} bytes; PostgreSQL NOTIFY carries at most ${MAX_NOTIFY_BYTES} (publish ids, not bodies)`)
  }
}
