import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

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
}
