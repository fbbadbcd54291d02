/* What the cards that answer with a model share: the user's text, and sending the answer (knowledge, agent). */
import { hostCall, safePreview } from './host.js'
import { jsonStringify } from './intrinsics.js'
import { sendMessage } from './hooks.js'
import { fail } from './run.js'
import type { Json, Run } from './types.js'
import { isObj } from './util.js'

export function previewText(event: Json): string {
  return typeof event.preview === 'string' ? event.preview : safePreview(event.payload)
}

/**
 * Sends a card's answer (`message`: payload and metadata). One whose pieces were streamed under `streamId` but that did
 * not become a message (an outgoing hook stopped it, or the send failed) is aborted: its listeners drop it.
 */
export async function sendAnswer(rt: Run, event: Json, where: string, message: Json, streamId: unknown): Promise<void> {
  let sent = false
  try {
    const result = (await sendMessage(rt, event, message, true)) as Json
    sent = isObj(result) && isObj(result.message)
  } catch (err) {
    fail(rt, where, err)
  }
  if (!sent && typeof streamId === 'string') {
    try {
      await hostCall('abortAnswerStream', jsonStringify({ streamId }))
    } catch (err) {
      fail(rt, where, err)
    }
  }
}
