/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const

/** The command was called wrongly (unknown flag, missing argument, nothing to connect to): exit 2. */
export class UsageError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** The command was fine but failed (API error, unreachable server, code that does not load): exit 1. */
export class CliError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message)
    this.name = 'CliError'
  }
}
