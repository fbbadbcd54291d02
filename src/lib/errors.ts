/**
 * The one registry of error types. Names and statuses are the Botpress wire contract
 * (wire-compat §2.3): the official clients pick the error class from `type` alone, so the
 * HTTP status must always equal the type's code.
 */
export const ERROR_STATUS = {
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
  // Parley's addition (no Botpress type exists): the database is unreachable; retry later.
  // The official clients surface it as UnknownError with this status and message.
  ServiceUnavailable: 503,
  // Parley's addition: a language model provider failed (refused connection, 5xx, malformed answer); docs/llm.md.
  BadGateway: 502,
} as const

export type ErrorType = keyof typeof ERROR_STATUS

export class ApiError extends Error {
  readonly status: number
  /** Sent as the Retry-After header (seconds), when set. */
  retryAfterSeconds: number | undefined
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly metadata?: Record<string, unknown>,
  ) {
    super(message)
    this.name = `${type}Error`
    this.status = ERROR_STATUS[type]
  }
}

/** Factories for the errors the domain raises, so messages stay consistent. */
export const errors = {
  notFound: (what: string, id?: string) =>
    new ApiError('ResourceNotFound', id === undefined ? `${what} not found` : `${what} "${id}" not found`),
  /** A 404 whose message says more than "X not found" (why, or what to do). */
  notFoundBecause: (message: string) => new ApiError('ResourceNotFound', message),
  alreadyExists: (what: string, id: string) => new ApiError('AlreadyExists', `${what} "${id}" already exists`),
  invalidPayload: (message: string) => new ApiError('InvalidPayload', message),
  /** The body names something that does not exist (an interface, plugin or integration id of a deploy). */
  referenceNotFound: (message: string) => new ApiError('ReferenceNotFound', message),
  /** A resource someone else holds (a handoff claimed by another agent). */
  locked: (message: string) => new ApiError('ResourceLockedConflict', message),
  /** A bot's own code failed (an action that threw, a remote bot that answered an error). */
  runtime: (message: string) => new ApiError('Runtime', message),
  /** A remote bot did not answer in time (or could not be reached). */
  timeout: (message: string) => new ApiError('OperationTimeout', message),
  invalidQuery: (message: string) => new ApiError('InvalidQuery', message),
  unauthorized: (message: string) => new ApiError('Unauthorized', message),
  forbidden: (message: string) => new ApiError('Forbidden', message),
  payloadTooLarge: (limit: number) =>
    new ApiError('PayloadTooLarge', `Request body exceeds the limit of ${limit} bytes`),
  unsupportedMediaType: (contentType: string) =>
    new ApiError('UnsupportedMediaType', `Unsupported content type "${contentType}"; send application/json`),
  methodNotFound: (method: string, url: string) =>
    new ApiError('MethodNotFound', `Method ${method} is not allowed on ${url}`),
  internal: () => new ApiError('Internal', 'An internal error occurred; quote the error id when reporting it'),
  unavailable: () => new ApiError('ServiceUnavailable', 'The database is unreachable; nothing was lost, retry in a moment'),
  shuttingDown: () => new ApiError('ServiceUnavailable', 'This instance is shutting down; retry (another instance, or this one once restarted, answers)'),
  /** 429 with a Retry-After header (seconds): a quota or rate that frees up with time. */
  rateLimited: (message: string, retryAfterSeconds: number) => Object.assign(new ApiError('RateLimited', message), { retryAfterSeconds }),
  /** 413 LimitExceeded: a bot's or workspace's LLM budget for the UTC day is spent (docs/llm-usage.md; not QuotaExceeded, which cognitive's legacy path retries). */
  llmBudgetSpent: (message: string, metadata: Record<string, unknown>) => new ApiError('LimitExceeded', message, metadata),
  /** A language model provider failed (docs/llm.md "Errors"): the message names the provider and model, never a key or its body. */
  providerFailed: (message: string) => new ApiError('BadGateway', message, { subtype: 'UPSTREAM_PROVIDER_FAILED' }),
  /**
   * The same failure on the `llm` interface's path (callAction generateContent): `Internal` with the subtype, what
   * @botpress/client parses (it knows no BadGateway: that would reach its caller as Unknown, without the metadata) and
   * @botpress/cognitive's legacy path reads as "try the next preferred model".
   */
  providerFailedInterface: (message: string) => new ApiError('Internal', message, { subtype: 'UPSTREAM_PROVIDER_FAILED' }),
  /** Nothing was sent to a remote bot or integration: `busy` (its queue is full: 429) or paused (its circuit is open: 503). */
  endpointRefused: (busy: boolean, message: string, retryAfterSeconds: number) =>
    Object.assign(new ApiError(busy ? 'RateLimited' : 'ServiceUnavailable', message), { retryAfterSeconds }),
}

/**
 * Statuses answered below the router (Node's HTTP parser, the header and request timeouts), before
 * any route or request id exists. 408 and 431 have no Botpress type: the body's `code` is the HTTP
 * status, as on every response, and `type` the nearest Botpress type (the official clients pick
 * the error class by `type`).
 */
export const PROTOCOL_ERROR_TYPES = {
  400: 'InvalidPayload',
  408: 'OperationTimeout',
  413: 'PayloadTooLarge',
  417: 'InvalidPayload',
  431: 'PayloadTooLarge',
} as const satisfies Record<number, ErrorType>

export type ProtocolStatus = keyof typeof PROTOCOL_ERROR_TYPES

/** The error body of a protocol-level answer (see PROTOCOL_ERROR_TYPES). */
export function protocolErrorBody(id: string, status: ProtocolStatus, message: string): ErrorBody {
  return { id, code: status, type: PROTOCOL_ERROR_TYPES[status], message }
}

/** Network and server-state error codes of PostgreSQL (node-postgres) and SQLite that mean "try again later". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300',
  'SQLITE_BUSY', 'SQLITE_LOCKED',
])

/** Is this error the database being unreachable (503), as opposed to a bug (500)? */
export function isUnavailableError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, message } = err as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
  return typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|connection error|Query read timeout/i.test(message)
}

/**
 * SQLite's and PostgreSQL's (SQLSTATE 23503) foreign-key violation. Every foreign key of the schema cascades on
 * delete, so it is always a row written after its parent (bot, integration, table…) was deleted.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503'
}

/**
 * The one translation of a write that raced the delete of its parent (both engines): 404, naming the parent where the
 * engine names the constraint (PostgreSQL's `<table>_<column>_fkey`: `files_bot_id_fkey` → "bot"); SQLite names none.
 */
export function fromConstraintError(err: unknown): ApiError | undefined {
  if (!isForeignKeyViolation(err)) return undefined
  const { constraint, table } = err as { constraint?: unknown; table?: unknown }
  const column = typeof constraint === 'string' && typeof table === 'string' && constraint.startsWith(`${table}_`) && constraint.endsWith('_id_fkey')
    ? constraint.slice(table.length + 1, -'_id_fkey'.length).replace(/_/g, ' ')
    : undefined
  return errors.notFoundBecause(column
    ? `The ${column} this request writes to no longer exists (it was deleted while the request ran)`
    : 'What this request writes to (its bot, integration, conversation or table) no longer exists (it was deleted while the request ran)')
}

/** The wire body of every non-2xx response. */
export interface ErrorBody {
  id: string
  code: number
  type: ErrorType
  message: string
  metadata?: Record<string, unknown>
}
