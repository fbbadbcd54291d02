/**
 * Issue #13 (4): free-form maps keyed by TypeBox's default `^.*$` lost keys containing line
 * terminators in responses. StringMap keys by ANY_KEY, and a route whose schema still uses a
 * narrower key pattern is refused when it is registered.
 */
import Fastify from 'fastify'
import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { narrowMapKeys, registerValidation } from '../../src/http/plugins/validation.js'
import { StringMap } from '../../src/http/schemas/common.js'

const ODD = { 'line\nfeed': 1, 'carriage\rreturn': 2, 'line\u2028separator': 3, 'paragraph\u2029separator': 4, plain: 5 }

describe('StringMap', () => {
  it('serializes every key, line terminators included', async () => {
    const app = Fastify()
    registerValidation(app)
    app.post('/echo', { schema: { body: StringMap(Type.Integer()), response: { 200: StringMap(Type.Integer()) } } }, async (request) => request.body)
    const res = await app.inject({ method: 'POST', url: '/echo', payload: ODD })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual(ODD)
    // values under such keys are validated too
    expect((await app.inject({ method: 'POST', url: '/echo', payload: { 'a\u2028b': 'x' } })).statusCode).toBe(400)
    await app.close()
  })

  it('checks key length bounds when given', async () => {
    const app = Fastify()
    registerValidation(app)
    app.post('/', { schema: { body: StringMap(Type.String(), { minKeyLength: 1, maxKeyLength: 3 }) } }, async () => ({}))
    expect((await app.inject({ method: 'POST', url: '/', payload: { abc: 'x' } })).statusCode).toBe(200)
    expect((await app.inject({ method: 'POST', url: '/', payload: { abcd: 'x' } })).statusCode).toBe(400)
    expect((await app.inject({ method: 'POST', url: '/', payload: { '': 'x' } })).statusCode).toBe(400)
    await app.close()
  })

  it('a route keyed by TypeBox\'s default Record pattern is refused at registration', async () => {
    expect(narrowMapKeys({ type: 'object', properties: { tags: Type.Record(Type.String(), Type.String()) } })).toBe('#/properties/tags')
    expect(narrowMapKeys({ type: 'object', properties: { tags: StringMap(Type.String()) } })).toBeUndefined()
    const app = Fastify()
    registerValidation(app)
    expect(() => app.get('/', { schema: { response: { 200: Type.Object({ m: Type.Record(Type.String(), Type.Unknown()) }) } } }, async () => ({}))).toThrow(/StringMap/)
    await app.close()
  })
})
