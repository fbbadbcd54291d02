import { pageCsp } from '../webchat/page.js'

/** The console's HTML shell: the app renders everything else; nothing user-provided is interpolated here. */
export const CONSOLE_CSP = pageCsp("'none'")

export function consolePage(assetVersion: string): string {
  const v = encodeURIComponent(assetVersion)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Parley console</title>
<link rel="stylesheet" href="assets/console.css?v=${v}">
<script type="module" src="assets/console.js?v=${v}"></script>
</head>
<body>
<div id="app"><main><h1>Parley console</h1><p>Loading…</p></main></div>
</body>
</html>
`
}
