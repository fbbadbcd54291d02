/** Where a chat integration's webchat page lives: `{publicUrl}/webchat/{webhookId}`. */
export const WEBCHAT_PREFIX = '/webchat'

export function webchatUrl(publicUrl: string, webhookId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${WEBCHAT_PREFIX}/${encodeURIComponent(webhookId)}`
}

/** Where Botpress's own webchat (`@botpress/webchat`) finds Parley: its `apiUrl`; its `clientId` is the webhook id. */
export const WEBCHAT_API_PREFIX = '/webchat-api'

export function webchatApiUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${WEBCHAT_API_PREFIX}`
}
