import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { ANY_KEY } from '../schemas/common.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/**
 * Two validators: bodies are checked strictly (no type coercion, unknown keys refused rather than
 * silently dropped), while query strings and path params, which are always strings on the wire,
 * are coerced to their declared types ("10" → 10, "false" → false, a single value → an array).
 */
export function registerValidation(app: FastifyInstance): void {
  const common = { useDefaults: true, removeAdditional: false, strict: false, allErrors: false, discriminator: true } as const
  const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }))
  const paramAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }))
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema))
  // One rule for free-form maps on every route (issue #13): keys are returned exactly as stored.
  app.addHook('onRoute', (route) => {
    const where = narrowMapKeys(route.schema)
    if (where) throw new Error(`${[route.method].flat().join(',')} ${route.url}: schema at ${where} keys a map by a pattern other than ANY_KEY; use StringMap (src/http/schemas/common.ts)`)
  })
}

/**
 * The path of the first `patternProperties` in a schema whose pattern is not `ANY_KEY`, if any.
 * Such a pattern (TypeBox's `Type.Record(Type.String(), …)` uses `^.*$`) skips keys it does not
 * match: the response serializer drops them and the validator leaves their values unchecked.
 */
export function narrowMapKeys(schema: unknown, path = '#'): string | undefined {
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) {
      const found = narrowMapKeys(item, `${path}/${i}`)
      if (found) return found
    }
    return undefined
  }
  if (schema === null || typeof schema !== 'object') return undefined
  const patterns = (schema as { patternProperties?: unknown }).patternProperties
  if (patterns !== null && typeof patterns === 'object' && Object.keys(patterns).some((p) => p !== ANY_KEY)) return path
  for (const [key, value] of Object.entries(schema)) {
    const found = narrowMapKeys(value, `${path}/${key}`)
    if (found) return found
  }
  return undefined
}
