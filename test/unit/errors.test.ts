import { describe, expect, it } from 'vitest'
import { ApiError, ERROR_STATUS, errors, isUnavailableError, type ErrorType } from '../../src/lib/errors.js'

/** The Botpress wire contract: type → HTTP status. */
const EXPECTED: Record<ErrorType, number> = {
  Unknown: 500,
  Internal: 500,
  Unauthorized: 401,
  Forbidden: 403,
  PayloadTooLarge: 413,
  InvalidPayload: 400,
  UnsupportedMediaType: 415,
  MethodNotFound: 405,
  ResourceNotFound: 404,
  InvalidJsonSchema: 400,
  InvalidDataFormat: 400,
  InvalidIdentifier: 400,
  RelationConflict: 409,
  ReferenceConstraint: 409,
  ResourceLockedConflict: 409,
  ResourceGone: 410,
  ReferenceNotFound: 400,
  InvalidQuery: 400,
  Runtime: 400,
  AlreadyExists: 409,
  RateLimited: 429,
  PaymentRequired: 402,
  QuotaExceeded: 403,
  LimitExceeded: 413,
  BreakingChanges: 400,
  OperationTimeout: 504,
  // Parley's one addition: the database is unreachable.
  ServiceUnavailable: 503,
  BadGateway: 502,
}

describe('isUnavailableError', () => {
  it('recognises unreachable-database errors of both engines', () => {
    expect(isUnavailableError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true)
    expect(isUnavailableError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true)
    expect(isUnavailableError(new Error('timeout exceeded when trying to connect'))).toBe(true)
    expect(isUnavailableError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(true)
  })

  it('leaves bugs and constraint errors alone', () => {
    expect(isUnavailableError(new TypeError('x is undefined'))).toBe(false)
    expect(isUnavailableError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false)
    expect(isUnavailableError(undefined)).toBe(false)
  })
})

describe('error registry', () => {
  it('maps every Botpress error type to its status', () => {
    expect(ERROR_STATUS).toEqual(EXPECTED)
  })

  it('only uses HTTP error statuses', () => {
    for (const status of Object.values(ERROR_STATUS)) {
      expect(Number.isInteger(status)).toBe(true)
      expect(status).toBeGreaterThanOrEqual(400)
      expect(status).toBeLessThan(600)
    }
  })

  it('ApiError carries the status of its type, whatever the type', () => {
    for (const type of Object.keys(ERROR_STATUS) as ErrorType[]) {
      const err = new ApiError(type, `a ${type}`, { detail: 1 })
      expect(err).toBeInstanceOf(Error)
      expect(err.type).toBe(type)
      expect(err.status).toBe(EXPECTED[type])
      expect(err.name).toBe(`${type}Error`)
      expect(err.message).toBe(`a ${type}`)
      expect(err.metadata).toEqual({ detail: 1 })
      expect(err.stack).toBeDefined()
    }
    expect(new ApiError('Forbidden', 'x').metadata).toBeUndefined()
  })
})

describe('error factories', () => {
  const cases: [string, ApiError, ErrorType, number, string | RegExp][] = [
    ['notFound(what)', errors.notFound('Conversation'), 'ResourceNotFound', 404, 'Conversation not found'],
    ['notFound(what, id)', errors.notFound('Conversation', 'c1'), 'ResourceNotFound', 404, 'Conversation "c1" not found'],
    ['alreadyExists', errors.alreadyExists('User', 'u1'), 'AlreadyExists', 409, 'User "u1" already exists'],
    ['invalidPayload', errors.invalidPayload('bad body'), 'InvalidPayload', 400, 'bad body'],
    ['invalidQuery', errors.invalidQuery('bad query'), 'InvalidQuery', 400, 'bad query'],
    ['unauthorized', errors.unauthorized('who are you'), 'Unauthorized', 401, 'who are you'],
    ['forbidden', errors.forbidden('no'), 'Forbidden', 403, 'no'],
    ['payloadTooLarge', errors.payloadTooLarge(1024), 'PayloadTooLarge', 413, /1024 bytes/],
    ['unsupportedMediaType', errors.unsupportedMediaType('text/plain'), 'UnsupportedMediaType', 415, /"text\/plain"/],
    ['methodNotFound', errors.methodNotFound('PATCH', '/x'), 'MethodNotFound', 405, /PATCH.*\/x/],
    ['internal', errors.internal(), 'Internal', 500, /internal error/],
  ]
  it.each(cases)('%s', (_name, err, type, status, message) => {
    expect(err).toBeInstanceOf(ApiError)
    expect(err.type).toBe(type)
    expect(err.status).toBe(status)
    expect(err.status).toBe(ERROR_STATUS[err.type])
    if (typeof message === 'string') expect(err.message).toBe(message)
    else expect(err.message).toMatch(message)
  })

  it('internal errors reveal nothing about the cause', () => {
    expect(errors.internal().metadata).toBeUndefined()
  })
})

describe('protocol errors (answered below the router)', () => {
  it('give every status a registered Botpress type, and the body keeps code = HTTP status', async () => {
    const { PROTOCOL_ERROR_TYPES, protocolErrorBody } = await import('../../src/lib/errors.js')
    for (const [status, type] of Object.entries(PROTOCOL_ERROR_TYPES)) {
      expect(Object.keys(ERROR_STATUS)).toContain(type)
      expect(Number(status)).toBeGreaterThanOrEqual(400)
      expect(Number(status)).toBeLessThan(500)
    }
    expect(protocolErrorBody('req-1', 431, 'too big')).toEqual({ id: 'req-1', code: 431, type: 'PayloadTooLarge', message: 'too big' })
    expect(protocolErrorBody('req-2', 408, 'late')).toEqual({ id: 'req-2', code: 408, type: 'OperationTimeout', message: 'late' })
  })
})
