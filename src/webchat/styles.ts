/** The webchat's stylesheet, served as /webchat/assets/webchat.css (the CSP allows no inline style). */
export const WEBCHAT_CSS = String.raw`
:root {
  --pw-bg: #f5f6f8; --pw-surface: #ffffff; --pw-text: #1c1e21; --pw-muted: #5f6368; --pw-border: #d5d8dd;
  --pw-accent: #2b59c3; --pw-accent-text: #ffffff; --pw-mine: #2b59c3; --pw-mine-text: #ffffff; --pw-theirs: #ffffff;
  --pw-focus: #f5a623; --pw-error: #b3261e; --pw-radius: 16px;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) {
    --pw-bg: #121416; --pw-surface: #1e2124; --pw-text: #e8eaed; --pw-muted: #a8adb3; --pw-border: #3a3f45;
    --pw-accent: #8ab4f8; --pw-accent-text: #0b1b3a; --pw-mine: #3b6fd8; --pw-mine-text: #ffffff; --pw-theirs: #1e2124;
    --pw-error: #f2b8b5;
  }
}
/* The bot's themeMode (data-theme on <html>): light or dark whatever the system says; auto follows it. */
:root[data-theme="light"] { color-scheme: light; }
:root[data-theme="dark"] {
  color-scheme: dark;
  --pw-bg: #121416; --pw-surface: #1e2124; --pw-text: #e8eaed; --pw-muted: #a8adb3; --pw-border: #3a3f45;
  --pw-accent: #8ab4f8; --pw-accent-text: #0b1b3a; --pw-mine: #3b6fd8; --pw-mine-text: #ffffff; --pw-theirs: #1e2124;
  --pw-error: #f2b8b5;
}
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body {
  background: var(--pw-bg); color: var(--pw-text);
  font: 16px/1.45 var(--pw-font, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif);
  -webkit-text-size-adjust: 100%;
}
.pw-sr-only {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.pw-skip:focus { position: fixed; top: 8px; left: 8px; z-index: 10; width: auto; height: auto; clip: auto; margin: 0;
  padding: 8px 12px; background: var(--pw-surface); color: var(--pw-text); border: 2px solid var(--pw-focus); }
.pw-app {
  display: flex; flex-direction: column; height: 100%; height: 100dvh; max-width: 760px; margin: 0 auto;
  background: var(--pw-bg);
}
.pw-header {
  display: flex; align-items: center; gap: 12px; padding: 12px 16px; padding-top: max(12px, env(safe-area-inset-top));
  background: var(--pw-surface); border-bottom: 1px solid var(--pw-border);
}
.pw-identity { flex: 1; min-width: 0; }
.pw-header h1 { font-size: 1.1rem; margin: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pw-description { margin: 0; font-size: .85rem; color: var(--pw-muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pw-avatar { width: 40px; height: 40px; border-radius: 50%; object-fit: cover; flex: 0 0 auto; background: var(--pw-border); }
.pw-avatar[hidden], .pw-description[hidden] { display: none; }
.pw-status { margin: 0; font-size: .85rem; color: var(--pw-muted); }
.pw-app[data-connection="reconnecting"] .pw-status, .pw-app[data-connection="unavailable"] .pw-status { color: var(--pw-error); }
.pw-close {
  border: 1px solid var(--pw-border); background: transparent; color: var(--pw-text); border-radius: 8px;
  min-width: 44px; min-height: 44px; font-size: 1.2rem; cursor: pointer;
}
.pw-log {
  flex: 1; overflow-y: auto; padding: 16px; display: flex; flex-direction: column; gap: 10px;
  overscroll-behavior: contain;
}
.pw-msg { display: flex; flex-direction: column; max-width: min(85%, 560px); }
.pw-msg-mine { align-self: flex-end; align-items: flex-end; }
.pw-msg-theirs { align-self: flex-start; align-items: flex-start; }
.pw-bubble {
  padding: 10px 14px; border-radius: var(--pw-radius); background: var(--pw-theirs); color: var(--pw-text);
  border: 1px solid var(--pw-border); overflow-wrap: anywhere; max-width: 100%;
}
.pw-msg-mine .pw-bubble { background: var(--pw-mine); color: var(--pw-mine-text); border-color: transparent; }
.pw-msg-mine .pw-bubble a { color: inherit; }
.pw-msg.pw-type-card .pw-bubble, .pw-msg.pw-type-carousel .pw-bubble { padding: 0; background: transparent; border: 0; }
.pw-system { align-self: center; max-width: 90%; margin: 4px 0; font-size: .8rem; color: var(--pw-muted); text-align: center; }
.pw-agent { display: flex; align-items: center; gap: 6px; margin: 0 6px 2px; font-size: .75rem; color: var(--pw-muted); }
.pw-agent-avatar { width: 20px; height: 20px; border-radius: 50%; object-fit: cover; flex: 0 0 auto; background: var(--pw-border); }
.pw-agent-initials { display: inline-flex; align-items: center; justify-content: center; font-size: .625rem; font-weight: 600; color: var(--pw-text); }
.pw-agent-name { font-weight: 600; }
.pw-time { font-size: .75rem; color: var(--pw-muted); margin: 2px 6px 0; }
.pw-text { margin: 0; white-space: pre-wrap; }
.pw-streaming .pw-text::after { content: "▍"; margin-left: 1px; color: var(--pw-muted); }
@media (prefers-reduced-motion: no-preference) { .pw-streaming .pw-text::after { animation: pw-blink 1s infinite both; } }
.pw-sources { margin: 4px 6px 0; font-size: .8rem; color: var(--pw-muted); }
.pw-sources-label { font-weight: 600; }
.pw-sources-list { margin: 2px 0 0; padding-left: 1.4em; }
.pw-source summary { cursor: pointer; color: var(--pw-text); overflow-wrap: anywhere; }
.pw-source-quote { margin: 2px 0 4px; white-space: pre-wrap; font-style: italic; }
.pw-unsupported { font-style: italic; color: var(--pw-muted); }
.pw-markdown > :first-child { margin-top: 0; } .pw-markdown > :last-child { margin-bottom: 0; }
.pw-markdown p, .pw-markdown ul, .pw-markdown ol, .pw-markdown pre, .pw-markdown blockquote { margin: .4em 0; }
.pw-markdown ul, .pw-markdown ol { padding-left: 1.4em; }
.pw-markdown pre { overflow-x: auto; padding: 8px; border-radius: 8px; background: rgba(127,127,127,.15); }
.pw-markdown code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.pw-markdown blockquote { border-left: 3px solid var(--pw-border); padding-left: 10px; color: var(--pw-muted); }
.pw-md-h { font-weight: 700; } .pw-md-h1 { font-size: 1.3em; } .pw-md-h2 { font-size: 1.15em; }
.pw-md-img, .pw-image { display: block; max-width: 100%; max-height: 320px; border-radius: 10px; }
.pw-image-link { display: block; }
.pw-media audio, .pw-media video { display: block; max-width: 100%; }
.pw-media video { max-height: 320px; border-radius: 10px; }
.pw-media-link { display: inline-block; margin-top: 4px; font-size: .85rem; }
.pw-icon { flex: 0 0 auto; }
.pw-file, .pw-location-link { display: inline-flex; gap: 8px; align-items: center; font-weight: 600; }
.pw-location-address, .pw-location-coords { margin: 2px 0 0; font-size: .85rem; color: var(--pw-muted); }
.pw-msg-mine .pw-location-address, .pw-msg-mine .pw-location-coords { color: inherit; }
.pw-card {
  width: 260px; max-width: 100%; background: var(--pw-surface); color: var(--pw-text); border: 1px solid var(--pw-border);
  border-radius: var(--pw-radius); overflow: hidden; display: flex; flex-direction: column; flex: 0 0 auto;
  scroll-snap-align: start;
}
.pw-card-image { width: 100%; height: 140px; object-fit: cover; display: block; }
.pw-card-body { padding: 10px 12px 4px; }
.pw-card-title { margin: 0; font-weight: 700; }
.pw-card-subtitle { margin: 2px 0 0; color: var(--pw-muted); font-size: .9rem; }
.pw-card .pw-actions { padding: 8px 12px 12px; flex-direction: column; }
.pw-carousel {
  display: flex; gap: 10px; overflow-x: auto; scroll-snap-type: x mandatory; max-width: min(100vw - 48px, 560px);
  padding-bottom: 6px;
}
.pw-actions { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 8px; }
.pw-button {
  display: inline-flex; align-items: center; justify-content: center; min-height: 44px; padding: 8px 14px;
  border-radius: 999px; border: 1px solid var(--pw-accent); background: var(--pw-surface); color: var(--pw-accent);
  font: inherit; font-weight: 600; cursor: pointer; text-decoration: none; text-align: center;
}
.pw-button:hover { background: var(--pw-accent); color: var(--pw-accent-text); }
.pw-button[disabled] { opacity: .5; cursor: not-allowed; }
.pw-dropdown label { display: block; margin-bottom: 6px; }
.pw-dropdown-row { display: flex; gap: 8px; flex-wrap: wrap; }
.pw-select {
  flex: 1; min-width: 140px; min-height: 44px; padding: 8px; border-radius: 10px; border: 1px solid var(--pw-border);
  background: var(--pw-surface); color: var(--pw-text); font: inherit;
}
.pw-bloc { display: flex; flex-direction: column; gap: 8px; }
.pw-feedback { display: flex; gap: 4px; margin: 2px 2px 0; }
.pw-feedback-button {
  display: inline-flex; align-items: center; justify-content: center; min-width: 44px; min-height: 44px; padding: 0;
  border: 1px solid transparent; border-radius: 999px; background: transparent; color: var(--pw-muted); cursor: pointer;
}
.pw-feedback-button:hover { border-color: var(--pw-border); color: var(--pw-text); }
.pw-feedback-button[aria-pressed="true"] { background: var(--pw-accent); border-color: var(--pw-accent); color: var(--pw-accent-text); }
.pw-feedback-button[disabled] { cursor: progress; }
.pw-typing { display: flex; align-items: center; gap: 8px; margin: 0; padding: 4px 16px 8px; font-size: .85rem; color: var(--pw-muted); }
.pw-typing[hidden] { display: none; }
.pw-typing-dots { display: inline-flex; gap: 3px; padding: 8px 10px; border-radius: var(--pw-radius); background: var(--pw-theirs); border: 1px solid var(--pw-border); }
.pw-typing-dots span { width: 6px; height: 6px; border-radius: 50%; background: var(--pw-muted); }
@media (prefers-reduced-motion: no-preference) {
  .pw-typing-dots span { animation: pw-blink 1.2s infinite both; }
  .pw-typing-dots span:nth-child(2) { animation-delay: .2s; }
  .pw-typing-dots span:nth-child(3) { animation-delay: .4s; }
  @keyframes pw-blink { 0%, 80%, 100% { opacity: .3; } 40% { opacity: 1; } }
}
.pw-error { margin: 0; padding: 8px 16px; color: var(--pw-error); background: var(--pw-surface); font-size: .9rem; }
.pw-composer {
  display: flex; gap: 8px; padding: 10px 12px; padding-bottom: max(10px, env(safe-area-inset-bottom));
  background: var(--pw-surface); border-top: 1px solid var(--pw-border); align-items: flex-end;
}
.pw-input {
  flex: 1; resize: none; min-height: 44px; max-height: 160px; padding: 10px 12px; border-radius: 12px;
  border: 1px solid var(--pw-border); background: var(--pw-bg); color: var(--pw-text); font: inherit;
}
.pw-attach {
  display: inline-flex; align-items: center; justify-content: center; min-height: 44px; min-width: 44px; padding: 0;
  border-radius: 12px; border: 1px solid var(--pw-border); background: var(--pw-surface); color: var(--pw-text); cursor: pointer;
}
.pw-attach[disabled] { cursor: progress; opacity: .6; }
.pw-send {
  min-height: 44px; min-width: 64px; padding: 0 16px; border-radius: 12px; border: 0; background: var(--pw-accent);
  color: var(--pw-accent-text); font: inherit; font-weight: 700; cursor: pointer;
}
a { color: var(--pw-accent); }
:focus-visible { outline: 3px solid var(--pw-focus); outline-offset: 2px; }
.pw-log:focus-visible { outline-offset: -3px; }
@media (max-width: 480px) {
  .pw-log { padding: 10px; }
  .pw-msg { max-width: 92%; }
  .pw-card { width: 230px; }
}
`
