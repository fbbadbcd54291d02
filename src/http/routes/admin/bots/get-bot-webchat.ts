import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { WEBCHAT_CODE_TYPES } from '../../../../webchat/snippets.js'
import { adminSchema } from '../common.js'

export default function getBotWebchat(app: App): void {
  app.get('/bots/:id/webchat', {
    config: { permission: 'bots.read' },
    schema: adminSchema('getBotWebchat',
      'Embed code of the bot\'s webchat, carrying its webchat settings: preconfigured (one script tag), configurable (editable JSON and the script), fullscreen (an HTML page), sharableUrl (the page address)',
      {
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ type: Type.Union(WEBCHAT_CODE_TYPES.map((t) => Type.Literal(t))) }),
      },
      { 200: Type.Object({ code: Type.String() }) }),
  }, async (request) => ({
    code: await app.services.bots.webchatCode(request.workspace.id, request.params.id, request.query.type, app.services.config.publicUrl),
  }))
}
