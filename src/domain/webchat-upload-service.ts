import { randomUUID } from 'node:crypto'
import { ApiError, errors } from '../lib/errors.js'
import type { Store, UserRow } from '../store/store.js'
import { DEFAULT_UPLOAD_MAX_BYTES, sanitizeWebchatConfig, uploadTypeAllowed } from '../webchat/shared/webchat-config.js'
import type { FileService } from './file-service.js'

export interface WebchatUploadInput {
  name: string
  contentType: string
  size: number
}

export interface WebchatUpload {
  /** The Files API's signed upload URL: PUT the content there. */
  uploadUrl: string
  /** Where the content is served once uploaded (stable: the file is public_content), for the message's payload. */
  url: string
  fileId: string
  contentType: string
  size: number
}

/**
 * A webchat user's file upload, through the Files API: a file of the bot (key `webchat/<userId>/<uuid>/<name>`,
 * tagged `source: webchat` and with the user and integration), readable by its stable URL, created only when the bot's
 * webchat settings allow that content type and size (`uploadTypes`, `uploadMaxBytes`); the upload URL enforces the
 * size again. The user's uploads count against the per-user quota of config.uploadQuota (by their key prefix), and
 * the bot's stored bytes against the per-bot one. The user then sends a message whose `image`/`file` payload points at `url`.
 */
export class WebchatUploadService {
  constructor(
    private readonly store: Store,
    private readonly files: FileService,
    private readonly maxFileBytes: number,
  ) {}

  async createUpload(user: UserRow, input: WebchatUploadInput): Promise<WebchatUpload> {
    const integration = await this.store.getIntegration(user.integrationId)
    const bot = integration && (await this.store.getBot(integration.botId))
    if (!integration || !bot) throw errors.notFound('Webhook', user.integrationId)
    const config = sanitizeWebchatConfig(bot.webchat ?? {})
    if (!config.uploadTypes) throw errors.forbidden('This chat does not accept files (the bot\'s webchat settings have no uploadTypes)')
    if (!uploadTypeAllowed(config.uploadTypes, input.contentType)) {
      throw new ApiError('UnsupportedMediaType', `Files of type ${input.contentType} are not accepted here; accepted: ${config.uploadTypes}`)
    }
    const maxBytes = Math.min(config.uploadMaxBytes ?? DEFAULT_UPLOAD_MAX_BYTES, this.maxFileBytes)
    if (input.size > maxBytes) throw new ApiError('PayloadTooLarge', `The file is ${input.size} bytes; this chat accepts files up to ${maxBytes} bytes`)
    const name = input.name.replace(/[\\/\u0000-\u001f\u007f]/g, '_').slice(0, 200) || 'file'
    const file = await this.files.upsertFile(bot.id, { kind: 'bot', botId: bot.id, keyId: 'webchat' }, {
      key: `webchat/${user.id}/${randomUUID()}/${name}`,
      size: input.size,
      contentType: input.contentType,
      accessPolicies: ['public_content'],
      tags: { source: 'webchat', userId: user.id },
      metadata: { webchatMaxBytes: maxBytes, name },
    }, { keyPrefix: `webchat/${user.id}/` })
    return { uploadUrl: file.uploadUrl, url: file.url, fileId: file.id, contentType: file.contentType, size: input.size }
  }
}
