import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/** Where a schema applies in a request: fastify's `httpPart` names (and its error messages' prefixes). */
export type HttpPart = 'params' | 'querystring' | 'body'

/**
 * The two validators of every route (src/http/plugins/validation.ts) and of the sandboxed bot's calls of the
 * same operations (src/http/operations): bodies are checked strictly (no type coercion, unknown keys refused
 * rather than silently dropped), while query strings and path params, which are always strings on the wire,
 * are coerced to their declared types ("10" → 10, "false" → false, a single value → an array). Ajv keeps one
 * compiled function per schema object, so a route and the sandbox share it.
 */
const common = { useDefaults: true, removeAdditional: false, strict: false, allErrors: false, discriminator: true } as const
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }))
const paramAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }))

/** The compiled validator of a schema for one part of a request. */
export function compileValidator(part: string | undefined, schema: object): ValidateFunction {
  return (part === 'body' ? bodyAjv : paramAjv).compile(schema)
}
