import type { ValidateFunction } from 'ajv'
import type { FastifyInstance } from 'fastify'
import fastJsonStringify from 'fast-json-stringify'
import { ANY_KEY } from '../schemas/common.js'
import { compileValidator } from '../schemas/validators.js'

/** The validators of src/http/schemas/validators.ts (strict bodies, coerced params and query strings). */
export function registerValidation(app: FastifyInstance): void {
  // Validators and response serializers are compiled on a route's first use, not at start: compiling all of
  // them took most of the start-up time (ajv's code generation and fast-json-stringify's, ~40% of the CPU
  // profile of `parley serve` before it listens), for routes most instances never call. Every schema is still
  // compiled by the test suite (the fuzz suite calls every operation), so none fails only in production.
  app.setValidatorCompiler(({ schema, httpPart }) => lazyValidator(() => compileValidator(httpPart, schema)))
  app.setSerializerCompiler(({ schema }) => {
    let serialize: ((data: unknown) => string) | undefined
    return (data: unknown) => (serialize ??= fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]))(data)
  })
  // One rule for free-form maps on every route (issue #13): keys are returned exactly as stored.
  app.addHook('onRoute', (route) => {
    const where = narrowMapKeys(route.schema)
    if (where) throw new Error(`${[route.method].flat().join(',')} ${route.url}: schema at ${where} keys a map by a pattern other than ANY_KEY; use StringMap (src/http/schemas/common.ts)`)
  })
}

/**
 * An ajv validator compiled when first called. Fastify reads `errors` from the function it was given and
 * passes the parent object when the function has `schemaEnv` (so ajv may coerce a root value): both are
 * forwarded to the compiled validator.
 */
function lazyValidator(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined
  const wrapper = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => (validate ??= compile())(data, context)) as ValidateFunction
  Object.defineProperty(wrapper, 'errors', { get: () => validate?.errors, set: () => {}, configurable: true })
  Object.defineProperty(wrapper, 'schemaEnv', { value: {}, configurable: true })
  return wrapper
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
