import { Type } from 'typebox'
import { StringMap } from '../../schemas/common.js'
import type { KnowledgeBaseRow, PassageRow } from '../../../store/knowledge-store.js'
import { KB_NAME_MAX } from '../../../domain/knowledge/knowledge-service.js'

const iso = (ms: number) => new Date(ms).toISOString()

export const KnowledgeBaseSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  tags: StringMap(Type.String()),
}, { additionalProperties: false })

export const KbName = Type.String({ minLength: 1, maxLength: KB_NAME_MAX })
export const KbIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) })

export const kbView = (kb: KnowledgeBaseRow) => ({ id: kb.id, name: kb.name, createdAt: iso(kb.createdAt), tags: kb.tags })

export const PassageMetaSchema = Type.Object({
  type: Type.Optional(Type.Literal('chunk')),
  subtype: Type.Optional(Type.String()),
  pageNumber: Type.Optional(Type.Integer()),
  position: Type.Optional(Type.Integer()),
  sourceUrl: Type.Optional(Type.String()),
})

export const passageMeta = (p: PassageRow) => ({
  type: 'chunk' as const,
  ...(p.meta.subtype !== undefined && { subtype: p.meta.subtype }),
  ...(p.meta.pageNumber !== undefined && { pageNumber: p.meta.pageNumber }),
  position: p.position,
})
