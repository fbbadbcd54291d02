/// <reference lib="dom" />
import type { ChatApi } from '../shared/chat-api.js'
import type { MessagePayload } from '../shared/types.js'
import { DEFAULT_UPLOAD_MAX_BYTES, uploadTypeAllowed, type WebchatConfig } from '../shared/webchat-config.js'
import { h } from './dom.js'

const CLIP = 'M21 11.5l-8.6 8.6a5 5 0 0 1-7.1-7.1l8.6-8.6a3.3 3.3 0 0 1 4.7 4.7l-8.6 8.6a1.7 1.7 0 0 1-2.4-2.4l7.9-7.9'

function clip(): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg'
  const svg = document.createElementNS(ns, 'svg')
  for (const [k, v] of Object.entries({ viewBox: '0 0 24 24', width: '20', height: '20', fill: 'none', stroke: 'currentColor', 'stroke-width': '2', 'stroke-linecap': 'round', 'aria-hidden': 'true', focusable: 'false' })) {
    svg.setAttribute(k, v)
  }
  const path = document.createElementNS(ns, 'path')
  path.setAttribute('d', CLIP)
  svg.appendChild(path)
  return svg
}

export interface UploadContext {
  form: HTMLFormElement
  input: HTMLTextAreaElement
  api: ChatApi
  config: WebchatConfig
  /** Sends the user's message (the image or file payload pointing at the uploaded content). */
  send(payload: MessagePayload): Promise<void>
  showError(text: string | undefined): void
}

const sizeText = (bytes: number) => (bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 102.4) / 10} MB` : `${Math.ceil(bytes / 1024)} KB`)

/**
 * The composer's "Attach a file" button, when the bot's settings allow uploads (`uploadTypes`): the file goes to
 * the Files API through a signed upload URL (Chat API createFileUpload), then the user's message is an `image`
 * payload for pictures, else a `file` payload with the file's name. The server checks type and size again.
 */
export function attachUpload(ctx: UploadContext): void {
  const types = ctx.config.uploadTypes
  if (!types) return
  const maxBytes = ctx.config.uploadMaxBytes ?? DEFAULT_UPLOAD_MAX_BYTES
  const picker = h('input', { class: 'pw-sr-only', attrs: { type: 'file', id: 'pw-file', accept: types, tabindex: '-1', 'aria-hidden': 'true' } })
  const button = h('button', {
    class: 'pw-attach',
    attrs: { type: 'button', id: 'pw-attach', 'aria-label': 'Attach a file', title: 'Attach a file' },
    on: { click: () => picker.click() },
  }, [clip()])
  picker.addEventListener('change', () => {
    const file = picker.files?.[0]
    picker.value = ''
    if (!file) return
    void upload(file)
  })

  async function upload(file: File): Promise<void> {
    ctx.showError(undefined)
    const contentType = file.type || 'application/octet-stream'
    if (!uploadTypeAllowed(types, contentType)) {
      ctx.showError(`This chat does not accept ${file.name} (accepted: ${types}).`)
      return
    }
    if (file.size > maxBytes) {
      ctx.showError(`${file.name} is ${sizeText(file.size)}; this chat accepts files up to ${sizeText(maxBytes)}.`)
      return
    }
    button.disabled = true
    button.setAttribute('aria-busy', 'true')
    try {
      const { file: target } = await ctx.api.createFileUpload({ name: file.name, contentType, size: file.size })
      const put = await fetch(target.uploadUrl, { method: 'PUT', headers: { 'content-type': contentType }, body: file })
      if (!put.ok) throw new Error(`the upload failed (HTTP ${put.status})`)
      await ctx.send(contentType.startsWith('image/') ? { type: 'image', imageUrl: target.url } : { type: 'file', fileUrl: target.url, title: file.name })
    } catch (err) {
      ctx.showError(`${file.name} was not sent: ${err instanceof Error ? err.message : String(err)}. Try again.`)
    } finally {
      button.disabled = false
      button.removeAttribute('aria-busy')
      ctx.input.focus()
    }
  }

  ctx.form.insertBefore(button, ctx.input)
  ctx.form.appendChild(picker)
}
