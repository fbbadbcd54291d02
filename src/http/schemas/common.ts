import { Type } from 'typebox'

/** The Botpress error body; every non-2xx response has this shape. */
export const ErrorBody = Type.Object(
  {
    id: Type.String({ description: 'Error id; quote it when reporting a problem (it is the request id in the logs)' }),
    code: Type.Integer({ description: 'Equal to the HTTP status' }),
    type: Type.String({ description: 'Error type, e.g. ResourceNotFound; see the README for the full list' }),
    message: Type.String(),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
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
export const JsonObjectSchema = Type.Record(Type.String(), Type.Unknown())
