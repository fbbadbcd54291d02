import { Type, type TSchema } from 'typebox'

/**
 * The key pattern of every free-form map: any string at all. TypeBox's `Type.Record(Type.String(), …)`
 * keys by `^.*$`, which does not match keys containing \n, \r, U+2028 or U+2029 (`.` stops at line
 * terminators): fast-json-stringify then dropped those keys from responses (the stream, which uses
 * JSON.stringify, kept them) and Ajv left their values unvalidated (issue #13). Use `StringMap`;
 * `registerValidation` refuses to register a route whose schema keys a map by anything else.
 */
export const ANY_KEY = '^[\\s\\S]*$'

/**
 * A free-form object `{ [key: string]: V }` whose keys are returned exactly as stored. Key length
 * bounds, when given, are checked with `propertyNames`.
 */
export function StringMap<V extends TSchema>(value: V, options: { minKeyLength?: number; maxKeyLength?: number; description?: string } = {}) {
  const { minKeyLength, maxKeyLength, description } = options
  const keys = { ...(minKeyLength !== undefined && { minLength: minKeyLength }), ...(maxKeyLength !== undefined && { maxLength: maxKeyLength }) }
  return Type.Record(Type.String({ pattern: ANY_KEY }), value, {
    ...(description !== undefined && { description }),
    ...(Object.keys(keys).length > 0 && { propertyNames: keys }),
  })
}

/** The Botpress error body; every non-2xx response has this shape. */
export const ErrorBody = Type.Object(
  {
    id: Type.String({ description: 'Error id; quote it when reporting a problem (it is the request id in the logs)' }),
    code: Type.Integer({ description: 'Equal to the HTTP status' }),
    type: Type.String({ description: 'Error type, e.g. ResourceNotFound; see the README for the full list' }),
    message: Type.String(),
    metadata: Type.Optional(StringMap(Type.Unknown())),
  },
  { additionalProperties: false },
)

export const EmptyObject = Type.Object({}, { additionalProperties: false })
/** DELETE bodies: the official clients send `{}`; accept that or nothing. */
export const EmptyBody = Type.Object({}, { additionalProperties: false, description: "Empty; the official clients send {}" })

export const NextTokenQuery = Type.Object(
  // Unknown parameters (cache busters like `_=…`) are ignored, not refused.
  { nextToken: Type.Optional(Type.String({ maxLength: 512, description: 'Token from the previous page\'s meta.nextToken' })) },
)

export const ListMeta = Type.Object({ nextToken: Type.Optional(Type.String()) }, { additionalProperties: false })

/** The `meta` of a list response: the next page's token, when there is one. */
export const listMeta = (page: { next?: string | undefined }) => ({ ...(page.next && { nextToken: page.next }) })

export const IsoDate = Type.String({ format: 'date-time' })

/** A free-form JSON object (event payloads, metadata): depth, key and string checks happen at parse time. */
export const JsonObjectSchema = StringMap(Type.Unknown())
