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
`
