import { escapeHtml } from './page.js'
import { dataAttributeOf, SERVER_ONLY_KEYS, WEBCHAT_CONFIG_KEYS, type WebchatConfig } from './shared/webchat-config.js'
import { WEBCHAT_PREFIX, webchatApiUrl, webchatUrl } from './urls.js'

/** The embed code types of getBotWebchat (@botpress/client@1.45.0's `type` query). */
export const WEBCHAT_CODE_TYPES = ['preconfigured', 'configurable', 'fullscreen', 'sharableUrl', 'botpressWebchat'] as const
export type WebchatCodeType = (typeof WEBCHAT_CODE_TYPES)[number]

/** JSON that can sit inside a <script> element: no `<` (so no `</script>`), and no U+2028/9. */
function scriptJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

/**
 * The embed code of one type for a chat integration, carrying the bot's webchat configuration:
 * - `preconfigured`: one `<script>` tag of embed.js whose data-* attributes carry every setting;
 * - `configurable`: the settings as an editable JSON block (every key, unset ones as null, to show what exists)
 *   read by embed.js through `data-config`;
 * - `fullscreen`: a whole HTML page showing the chat full screen (an iframe of the webchat page);
 * - `sharableUrl`: the webchat page's address (the server applies the stored settings).
 */
export function webchatCode(type: WebchatCodeType, options: { publicUrl: string; webhookId: string; config: WebchatConfig }): string {
  const { publicUrl, webhookId, config } = options
  const base = publicUrl.replace(/\/+$/, '')
  const embedSrc = `${base}${WEBCHAT_PREFIX}/embed.js`
  const page = webchatUrl(base, webhookId)
  // Upload settings are the server's policy: not in snippets (an embed cannot override them).
  const keys = WEBCHAT_CONFIG_KEYS.filter((k) => !SERVER_ONLY_KEYS.includes(k))
  const entries = keys.filter((k) => config[k] !== undefined).map((k) => [k, config[k]!] as const)
  switch (type) {
    case 'preconfigured': {
      const attrs = entries.map(([k, v]) => `\n  ${dataAttributeOf(k)}="${escapeHtml(String(v))}"`).join('')
      return `<script src="${escapeHtml(embedSrc)}"\n  data-webhook-id="${escapeHtml(webhookId)}"${attrs}\n  async></script>\n`
    }
    case 'configurable': {
      const all = Object.fromEntries([['webhookId', webhookId], ...keys.map((k) => [k, config[k] ?? null])])
      return [
        '<!-- Edit the settings below (null: the bot\'s own setting). See docs/webchat.md for each key. -->',
        '<script type="application/json" id="parley-webchat-config">',
        scriptJson(all, 2),
        '</script>',
        `<script src="${escapeHtml(embedSrc)}" data-config="parley-webchat-config" async></script>`,
        '',
      ].join('\n')
    }
    case 'fullscreen': {
      const title = escapeHtml(config.botName ?? 'Chat')
      return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<title>${title}</title>
</head>
<body style="margin:0">
<iframe src="${escapeHtml(page)}" title="${title}" allow="clipboard-write" style="border:0;width:100vw;height:100vh;height:100dvh;display:block"></iframe>
</body>
</html>
`
    }
    case 'sharableUrl':
      return page
    case 'botpressWebchat':
      // Parley's addition: Botpress's own React webchat, unchanged, pointed at Parley (docs/webchat.md).
      return [
        '// npm install @botpress/webchat react react-dom',
        'import { Webchat } from \'@botpress/webchat\'',
        '',
        'export function Chat() {',
        `  return <Webchat clientId=${JSON.stringify(webhookId)} apiUrl=${JSON.stringify(webchatApiUrl(base))} />`,
        '}',
        '',
      ].join('\n')
  }
}
