/** Where a chat integration's webchat page lives: `{publicUrl}/webchat/{webhookId}`. */
export const WEBCHAT_PREFIX = '/webchat'

export function webchatUrl(publicUrl: string, webhookId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${WEBCHAT_PREFIX}/${encodeURIComponent(webhookId)}`
}
