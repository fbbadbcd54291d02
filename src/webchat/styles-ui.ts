/**
 * The stylesheet of the webchat's interactive parts (answered choices, carousel arrows, history loading, image
 * lightbox, new conversation, emoji picker), served after WEBCHAT_CSS in /webchat/assets/webchat.css.
 */
export const WEBCHAT_UI_CSS = String.raw`
.pw-button.pw-chosen, .pw-button.pw-chosen[disabled] {
  opacity: 1; background: var(--pw-accent); color: var(--pw-accent-text); border-color: var(--pw-accent);
}
.pw-button.pw-chosen::before { content: "\2713\00a0"; }
.pw-choice [disabled]:not(.pw-chosen), .pw-dropdown [disabled] { cursor: default; }
.pw-select[disabled] { opacity: .7; }

.pw-msg.pw-type-carousel { max-width: 100%; }
.pw-carousel-wrap { display: flex; flex-direction: column; gap: 4px; max-width: min(100vw - 40px, 560px); }
.pw-carousel {
  position: relative; max-width: 100%; scroll-snap-type: x mandatory; scroll-behavior: auto; scroll-padding: 0;
  overscroll-behavior-x: contain; scrollbar-width: thin; -webkit-overflow-scrolling: touch; touch-action: pan-x pan-y;
}
.pw-carousel > .pw-card { scroll-snap-align: start; scroll-snap-stop: always; }
.pw-carousel-controls { display: flex; align-items: center; justify-content: center; gap: 12px; }
.pw-carousel-controls[hidden] { display: none; }
.pw-carousel-arrow {
  min-width: 44px; min-height: 44px; border-radius: 999px; border: 1px solid var(--pw-accent); background: var(--pw-surface);
  color: var(--pw-accent); font: inherit; font-size: 1.5rem; line-height: 1; cursor: pointer;
}
@media (hover: hover) { .pw-carousel-arrow:hover { background: var(--pw-accent); color: var(--pw-accent-text); } }
.pw-carousel-arrow[aria-disabled="true"] { border-color: var(--pw-border); color: var(--pw-muted); background: var(--pw-surface); cursor: default; }
.pw-carousel-position { min-width: 5em; text-align: center; font-size: .85rem; color: var(--pw-muted); }
@media (max-width: 480px) {
  .pw-carousel-wrap { max-width: calc(100vw - 24px); }
  .pw-carousel > .pw-card { width: min(260px, calc(100vw - 64px)); }
}
.pw-history { display: flex; flex-direction: column; align-items: center; gap: 6px; padding: 4px 0 8px; }
.pw-history[data-state="off"] { display: none; }
.pw-history-button {
  min-height: 44px; padding: 8px 16px; border-radius: 999px; border: 1px solid var(--pw-border); background: var(--pw-surface);
  color: var(--pw-accent); font: inherit; font-size: .9rem; font-weight: 600; cursor: pointer;
}
.pw-history[data-state="loading"] .pw-history-button { color: var(--pw-muted); cursor: progress; }
.pw-history-end { margin: 0; font-size: .85rem; color: var(--pw-muted); }
.pw-log { overflow-anchor: none; }
.pw-image-button {
  display: block; padding: 0; margin: 0; border: 0; background: none; border-radius: 10px; cursor: zoom-in; max-width: 100%;
}
.pw-markdown .pw-image-button { display: inline-block; }
.pw-lightbox {
  width: 100vw; height: 100vh; height: 100dvh; max-width: 100vw; max-height: 100vh; max-height: 100dvh; margin: 0; padding: 0;
  border: 0; background: rgba(0, 0, 0, .92); color: #fff;
}
.pw-lightbox[open] { display: flex; flex-direction: column; }
.pw-lightbox::backdrop { background: rgba(0, 0, 0, .6); }
.pw-lightbox-bar {
  display: flex; align-items: center; gap: 12px; padding: 8px 12px; padding-top: max(8px, env(safe-area-inset-top));
}
.pw-lightbox-title { flex: 1; margin: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pw-lightbox-link { color: #cfe0ff; font-size: .9rem; }
.pw-lightbox-close {
  min-width: 44px; min-height: 44px; border-radius: 999px; border: 1px solid rgba(255, 255, 255, .6); background: transparent;
  color: #fff; font: inherit; font-size: 1.5rem; line-height: 1; cursor: pointer;
}
.pw-lightbox-stage { flex: 1; min-height: 0; display: flex; align-items: center; justify-content: center; padding: 8px; cursor: zoom-out; }
.pw-lightbox-image { width: 100%; height: 100%; object-fit: contain; cursor: default; }
.pw-restart {
  min-height: 44px; padding: 0 12px; border-radius: 8px; border: 1px solid var(--pw-border); background: transparent;
  color: var(--pw-text); font: inherit; font-size: .9rem; font-weight: 600; cursor: pointer; white-space: nowrap;
}
.pw-restart[aria-busy="true"] { cursor: progress; color: var(--pw-muted); }
.pw-composer { position: relative; }
.pw-emoji-toggle {
  min-width: 44px; min-height: 44px; border-radius: 12px; border: 1px solid var(--pw-border); background: var(--pw-surface);
  font-size: 1.25rem; line-height: 1; cursor: pointer; padding: 0;
}
.pw-emoji-panel {
  position: absolute; bottom: calc(100% + 4px); left: 8px; z-index: 5; display: grid; grid-template-columns: repeat(8, 44px);
  gap: 2px; padding: 6px; background: var(--pw-surface); border: 1px solid var(--pw-border); border-radius: 12px;
  box-shadow: 0 4px 16px rgba(0, 0, 0, .18); max-width: calc(100vw - 16px);
}
.pw-emoji-panel[hidden] { display: none; }
.pw-emoji {
  width: 44px; height: 44px; border: 0; border-radius: 8px; background: transparent; font-size: 1.4rem; line-height: 1;
  cursor: pointer; padding: 0;
}
.pw-emoji:hover, .pw-emoji:focus-visible { background: var(--pw-bg); }
@media (max-width: 480px) {
  .pw-header { gap: 8px; padding-left: 12px; padding-right: 12px; }
  .pw-emoji-panel { grid-template-columns: repeat(6, 44px); left: 4px; }
}
`
