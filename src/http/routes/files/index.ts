import { registerBotScope } from '../../plugins/bot-scope.js'
import type { App } from '../../types.js'
import upsertFile from './upsert-file.js'
import getFile from './get-file.js'
import listFiles from './list-files.js'
import updateFileMetadata from './update-file-metadata.js'
import deleteFile from './delete-file.js'
import uploadContent from './upload-content.js'
import downloadContent from './download-content.js'
import searchFiles from './search-files.js'
import listFilePassages from './list-file-passages.js'
import setFilePassages from './set-file-passages.js'
import copyFile from './copy-file.js'
import listFileTags from './list-file-tags.js'
import listFileTagValues from './list-file-tag-values.js'
import createKnowledgeBase from './create-knowledge-base.js'
import listKnowledgeBases from './list-knowledge-bases.js'
import updateKnowledgeBase from './update-knowledge-base.js'
import deleteKnowledgeBase from './delete-knowledge-base.js'

/**
 * The Files API under /v1/files (wire-compat §2.5). Two scopes:
 *
 * - Signed URLs, no auth headers (the URL is the credential):
 *   `PUT /v1/files/uploads/{token}`          upload URL returned by upsertFile (raw body, any Content-Type)
 *   `GET /v1/files/content/{botId}/{fileId}`  file.url (signed `?expires&signature`, or unsigned for public_content)
 * - Bearer token + x-bot-id (401 when missing or unknown, 403 without the route's permission):
 *   `PUT /v1/files`, `GET /v1/files`, `GET|PUT|DELETE /v1/files/{id}` (id or key),
 *   `POST /v1/files/{idOrKey}/{destinationKey}` (copy), `GET|PUT /v1/files/{id}/passages`,
 *   `GET /v1/files/search`, `GET /v1/files/tags[/{tag}/values]`, `/v1/files/knowledge-bases[/{id}]`.
 *
 * For one method, static segments win over `/{id}` (find-my-way matches static nodes first): a file
 * whose key is `search`, `tags`, `knowledge-bases`, `uploads` or `content` may have to be reached by id.
 * x-integration-id/-alias/-name and x-user-id/-role are accepted and ignored.
 */
export async function filesRoutes(app: App): Promise<void> {
  const { config, files } = app.services

  await app.register(async function signedUrls(scope: App) {
    scope.removeAllContentTypeParsers()
    // Leave the body unread: the upload handler streams request.raw itself.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
    uploadContent(scope)
    downloadContent(scope)
  })

  await app.register(async function authenticated(scope: App) {
    // The spec's Files API JSON limit (1 MB); file content goes through the upload URL instead.
    registerBotScope(scope, { key: 'filesBot', bodyLimit: config.filesBodyLimit, defaultPermission: 'files.write' })
    for (const route of [upsertFile, listFiles, getFile, updateFileMetadata, deleteFile, copyFile, listFileTags, listFileTagValues]) route(scope)
    for (const route of [searchFiles, listFilePassages, setFilePassages, createKnowledgeBase, listKnowledgeBases, updateKnowledgeBase, deleteKnowledgeBase]) route(scope)
  })

  // Background indexing: resume files left indexing_pending by a previous run; finish the current batch on close.
  app.addHook('onReady', async () => files.knowledge.start())
  app.addHook('preClose', async () => files.knowledge.stop())
}
