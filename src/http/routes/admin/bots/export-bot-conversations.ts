import { Readable } from 'node:stream'
import { Type } from 'typebox'
import type { App } from '../../../types.js'
import { adminSchema } from '../common.js'
import { serveUntrusted } from '../../../untrusted-content.js'
import { ArchiveQuery } from './archive-schemas.js'
import { EXPORT_COLUMNS, csvField, type ExportRow } from '../../../../domain/conversation-archive-service.js'

export default function exportBotConversations(app: App): void {
  app.get('/bots/:id/export', {
    config: { permission: 'conversations.read' },
    schema: adminSchema('exportBotConversations',
      'The messages of the matching conversations (one with conversationId), by conversation then sequence, as CSV or JSON Lines, streamed from the database a page at a time',
      {
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({
          format: Type.Union([Type.Literal('csv'), Type.Literal('json')]),
          conversationId: Type.Optional(Type.String({ maxLength: 200 })),
          ...ArchiveQuery,
        }),
      },
      { 200: Type.Unknown({ description: 'text/csv, or application/x-ndjson (one message object a line)' }) }),
  }, async (request, reply) => {
    const { format, ...query } = request.query
    const pages = app.services.archive.exportRows(request.workspace.id, request.params.id, query)
    // The first page is read before answering: a bad filter or an unknown bot is a 4xx, not a broken stream.
    const first = await pages.next()
    async function* lines(): AsyncGenerator<string> {
      if (format === 'csv') yield `${EXPORT_COLUMNS.join(',')}\r\n`
      const emit = (rows: ExportRow[]) => rows.map((r) => format === 'csv'
        ? `${EXPORT_COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`
        : `${JSON.stringify(r)}\n`).join('')
      if (!first.done) yield emit(first.value)
      for await (const rows of pages) yield emit(rows)
    }
    const stamp = new Date().toISOString().slice(0, 10)
    // Users' words: served like any untrusted bytes, always as a download.
    return serveUntrusted(reply, {
      contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      fileName: `conversations-${stamp}.${format === 'csv' ? 'csv' : 'jsonl'}`,
      attachment: true,
      embeddable: false,
    })
      .header('cache-control', 'no-store')
      .send(Readable.from(lines()))
  })
}
