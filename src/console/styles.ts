/** The console's stylesheet (colours meet WCAG AA contrast; focus always visible). */
export const CONSOLE_CSS = `
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: #1a1a1a; background: #f6f7f9; }
a { color: #0b57d0; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
header.top { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; padding: .6rem 1rem; background: #1f2933; color: #fff; }
header.top h1 { font-size: 1.1rem; margin: 0 1rem 0 0; }
header.top label { font-size: .9rem; }
header.top select { margin-left: .3rem; }
header.top .who { margin-left: auto; font-size: .9rem; }
nav.tabs { display: flex; gap: .25rem; padding: .5rem 1rem 0; border-bottom: 1px solid #c9ced6; background: #fff; }
nav.tabs a { padding: .45rem .9rem; text-decoration: none; color: #1a1a1a; border-radius: 6px 6px 0 0; }
nav.tabs a[aria-current="page"] { background: #1558b0; color: #fff; }
main { padding: 1rem; }
button { font: inherit; padding: .35rem .8rem; border: 1px solid #1558b0; background: #1558b0; color: #fff; border-radius: 5px; cursor: pointer; }
button.secondary { background: #fff; color: #1558b0; }
input, select, textarea { font: inherit; padding: .3rem .45rem; border: 1px solid #6b7280; border-radius: 4px; background: #fff; color: #1a1a1a; }
form.filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; }
form.filters label.inline { flex-direction: row; gap: .35rem; align-items: center; }
.split { display: grid; grid-template-columns: minmax(16rem, 1fr) 2fr; gap: 1rem; }
ul.conversations { list-style: none; margin: 0; padding: 0; }
ul.conversations li button { width: 100%; text-align: left; background: #fff; color: #1a1a1a; border: 1px solid #c9ced6; margin-bottom: .35rem; }
ul.conversations li button[aria-pressed="true"] { border: 2px solid #1558b0; }
.meta { color: #4a5160; font-size: .85rem; }
section.panel { background: #fff; border: 1px solid #c9ced6; border-radius: 6px; padding: 1rem; margin-bottom: 1rem; }
ol.transcript { list-style: none; margin: 0; padding: 0; }
ol.transcript > li { margin: .5rem 0; padding: .5rem .7rem; border-radius: 6px; max-width: 80%; }
ol.transcript > li.incoming { background: #eef2f7; }
ol.transcript > li.outgoing { background: #e3f0e8; margin-left: auto; }
ol.transcript img, ol.transcript video { max-width: 100%; }
.log { font-family: ui-monospace, monospace; font-size: .85rem; white-space: pre-wrap; word-break: break-word; margin: .25rem 0 0; padding: .3rem .5rem; background: #fff8e1; border-left: 3px solid #8a4b00; }
.log.error { background: #fdecea; border-left-color: #b3261e; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { border: 1px solid #c9ced6; padding: .25rem .5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1rem; }
.charts > section { min-width: 0; overflow: hidden; }
.charts table { width: 100%; }
.model-calls { margin-top: .4rem; }
.model-calls table { width: 100%; background: #fff; }
.model-calls th { text-align: left; }
.model-calls td:nth-child(2), .model-calls td:last-child { text-align: left; overflow-wrap: anywhere; }
.model-calls td:nth-child(3), .model-calls td:nth-child(5) { white-space: nowrap; }
.error-box { color: #b3261e; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.pw-quick-replies, .pw-choices { display: flex; flex-wrap: wrap; gap: .3rem; }
details summary { cursor: pointer; }
ol.transcript > li.system { max-width: none; text-align: center; color: #4a5160; font-size: .85rem; }
ul.notes { list-style: none; margin: 0 0 .5rem; padding: 0; }
ul.notes > li { background: #fff8e1; border-left: 3px solid #8a4b00; padding: .3rem .6rem; margin: .3rem 0; }
ul.notes p { margin: .2rem 0 0; white-space: pre-wrap; word-break: break-word; }
form.composer { border-top: 1px solid #c9ced6; margin-top: 1rem; }
form.composer textarea { width: 100%; max-width: 40rem; }
p.actions [hidden], .assign[hidden] { display: none; }
ol.transcript .pw-image-button { background: none; border: 0; padding: 0; }
ol.transcript img.pw-image { max-height: 16rem; }
`
