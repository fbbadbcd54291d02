import type { MetricsRegistry } from '../lib/metrics.js'
import type { BotSummary, LogLevel } from './prelude-contract.js'

/**
 * Where bot code runs. Bot code is untrusted: an implementation must never run it in the
 * server's own V8 context, must stop it at its time and memory limits, and must give it no
 * ambient I/O — only the host calls passed in `SandboxHost`.
 */
export interface BotSandbox {
  /** Loads the code in a fresh sandbox: its export summary, or the load error with its line. */
  check(code: string): Promise<CheckResult>
  /** Runs one entry of the in-sandbox runtime for a bot. Resolves with the entry's JSON output. */
  run(request: SandboxRun, host: SandboxHost): Promise<string>
  close(): Promise<void>
  /** Registers the implementation's own series for /metrics, if it has any. */
  registerMetrics?(metrics: MetricsRegistry): void
}

export type CheckResult = { ok: true; summary: BotSummary } | { ok: false; error: string }

export interface SandboxLimits {
  /** Wall time of one hook, action or card run. */
  budgetMs: number
  /** Wall time of a whole run (a turn may run several hooks and cards). */
  timeoutMs: number
  memoryBytes: number
}

export interface SandboxRun {
  botId: string
  /** Changes whenever the code changes (deployedAt): cached sandboxes of other versions are dropped. */
  version: string
  code: string
  /** turn: TurnInput → TurnOutput; beforeIncoming; action: ActionInput → ActionOutput (prelude-contract.ts). */
  entry: 'turn' | 'beforeIncoming' | 'action'
  input: string
  limits: SandboxLimits
}

export interface SandboxHost {
  call(method: string, args: unknown): Promise<unknown>
  log(level: LogLevel, text: string): void
  /** The run is started again from the beginning (on another worker): its host calls will be repeated. */
  restarted?(): void
}

export type SandboxFailure = 'timeout' | 'memory' | 'error' | 'crashed'

export class SandboxError extends Error {
  constructor(
    readonly kind: SandboxFailure,
    message: string,
  ) {
    super(message)
    this.name = 'SandboxError'
  }
}

export const DEFAULT_LIMITS: SandboxLimits = { budgetMs: 5_000, timeoutMs: 30_000, memoryBytes: 128 * 1024 * 1024 }
