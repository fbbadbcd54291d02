import { Type } from 'typebox'
import { IsoDate, JsonObjectSchema } from './common.js'

/**
 * Chat API schemas. Payloads follow the spec's tables exactly: every listed string is minLength 1
 * (except location address/title), required fields are required, and unknown keys are refused.
 */
const NonEmpty = (description?: string) => Type.String({ minLength: 1, ...(description && { description }) })
const strict = { additionalProperties: false } as const

const ActionSchema = Type.Object(
  { action: Type.Union([Type.Literal('postback'), Type.Literal('url'), Type.Literal('say')]), label: NonEmpty(), value: NonEmpty() },
  strict,
)
const OptionSchema = Type.Object({ label: NonEmpty(), value: NonEmpty() }, strict)

const cardFields = {
  title: NonEmpty(),
  subtitle: Type.Optional(NonEmpty()),
  imageUrl: Type.Optional(NonEmpty()),
  actions: Type.Array(ActionSchema),
}

const variants = {
  audio: Type.Object({ type: Type.Literal('audio'), audioUrl: NonEmpty() }, strict),
  card: Type.Object({ type: Type.Literal('card'), ...cardFields }, strict),
  carousel: Type.Object(
    // The official client types carousel items as cards carrying `type: 'card'`; accept it, require nothing more.
    { type: Type.Literal('carousel'), items: Type.Array(Type.Object({ type: Type.Optional(Type.Literal('card')), ...cardFields }, strict)) },
    strict,
  ),
  choice: Type.Object({ type: Type.Literal('choice'), text: NonEmpty(), options: Type.Array(OptionSchema) }, strict),
  dropdown: Type.Object({ type: Type.Literal('dropdown'), text: NonEmpty(), options: Type.Array(OptionSchema) }, strict),
  file: Type.Object({ type: Type.Literal('file'), fileUrl: NonEmpty(), title: Type.Optional(NonEmpty()) }, strict),
  image: Type.Object({ type: Type.Literal('image'), imageUrl: NonEmpty() }, strict),
  location: Type.Object(
    {
      type: Type.Literal('location'),
      latitude: Type.Number(),
      longitude: Type.Number(),
      address: Type.Optional(Type.String()),
      title: Type.Optional(Type.String()),
    },
    strict,
  ),
  markdown: Type.Object({ type: Type.Literal('markdown'), markdown: NonEmpty() }, strict),
  text: Type.Object({ type: Type.Literal('text'), text: NonEmpty() }, strict),
  video: Type.Object({ type: Type.Literal('video'), videoUrl: NonEmpty() }, strict),
}

/** A discriminated `oneOf`: ajv picks the branch by `type` and reports that branch's errors only. */
function discriminated(branches: unknown[], description: string) {
  return Type.Unsafe<{ type: string; [key: string]: unknown }>({ type: 'object', required: ['type'], discriminator: { propertyName: 'type' }, oneOf: branches, description })
}

const blocItem = discriminated(
  [variants.text, variants.markdown, variants.image, variants.audio, variants.video, variants.file, variants.location],
  'One item of a bloc',
)
const bloc = Type.Object({ type: Type.Literal('bloc'), items: Type.Array(blocItem) }, strict)

export const MessagePayloadSchema = discriminated(
  [...Object.values(variants), bloc],
  'Message content; `type` selects one of: ' + [...Object.keys(variants), 'bloc'].join(', '),
)
export type MessagePayload = { type: string; [key: string]: unknown }
export const PAYLOAD_TYPES = [...Object.keys(variants), 'bloc'] as const
export const BLOC_ITEM_TYPES = ['text', 'markdown', 'image', 'audio', 'video', 'file', 'location'] as const

/**
 * An unknown payload `type` (ajv's discriminator error, `must be in oneOf`) as a message that lists the
 * allowed types (the payload's, or a bloc item's) and the value sent; undefined for any other error.
 * `path` is where the payload is (`body/payload`, `payload`); `instancePath` is ajv's path inside it.
 */
export function payloadTypeProblem(error: { keyword: string; instancePath: string; params: unknown }, path: string): string | undefined {
  if (error.keyword !== 'discriminator') return undefined
  const params = error.params as { tag?: string; tagValue?: unknown; error?: string }
  const types = /\/items\/\d+$/.test(error.instancePath) ? BLOC_ITEM_TYPES : PAYLOAD_TYPES
  const where = `${path}/${params.tag ?? 'type'}`
  if (params.error === 'tag') return `${where} must be a string, one of: ${types.join(', ')}`
  return `${where} must be one of: ${types.join(', ')}; got ${JSON.stringify(params.tagValue)}`
}

/** Response-side payload: stored payloads were validated on the way in. */
const StoredPayload = JsonObjectSchema

export const UserSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.Optional(Type.String()),
    pictureUrl: Type.Optional(Type.String()),
    profile: Type.Optional(Type.String()),
    createdAt: IsoDate,
    updatedAt: IsoDate,
  },
  { additionalProperties: false },
)

export const ConversationSchema = Type.Object(
  { id: Type.String(), createdAt: IsoDate, updatedAt: IsoDate },
  { additionalProperties: false },
)

export const MessageSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: IsoDate,
    payload: StoredPayload,
    userId: Type.String(),
    conversationId: Type.String(),
    metadata: Type.Optional(JsonObjectSchema),
  },
  { additionalProperties: false },
)

export const EventSchema = Type.Object(
  { id: Type.String(), createdAt: IsoDate, payload: JsonObjectSchema, conversationId: Type.String(), userId: Type.String() },
  { additionalProperties: false },
)

export const UserFields = {
  name: Type.Optional(Type.String({ maxLength: 1000 })),
  pictureUrl: Type.Optional(Type.String({ maxLength: 4096 })),
  profile: Type.Optional(Type.String({ maxLength: 1000 })),
}

export const ForeignId = Type.String({ description: 'Caller-chosen id: 1-100 of letters, digits, "-", "_"' })

