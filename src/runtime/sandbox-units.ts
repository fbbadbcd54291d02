import { uuidv7 } from '../lib/ids.js'
import { MetricsRegistry, type Counter, type Histogram } from '../lib/metrics.js'
import type { BotLogRow, BotRow, Store } from '../store/store.js'
import { BUDGET_EXCEEDED } from './prelude-contract.js'
import { SandboxError, type BotSandbox, type SandboxHost, type SandboxLimits } from './sandbox.js'
import { mapDeployedPositions, SourceMap } from './source-map.js'

/** What a sandbox run was for (the `kind` label of the runtime's series). */
export type RunKind = 'message' | 'event' | 'start' | 'webhook' | 'bot_event' | 'action' | 'before_incoming'
/** How a sandbox run ended: `error` = the bot code threw (caught and logged), the others = stopped by the sandbox. */
export type RunFailure = 'error' | 'timeout' | 'memory' | 'crashed'
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** One run of a bot's deployed code: which entry of the prelude, with what input (its budget is added here). */
export interface Unit {
  kind: RunKind
  entry: 'turn' | 'action' | 'beforeIncoming'
  input: Record<string, unknown>
  /** The code to run (the bot's deployed code unless given). */
  code?: string | undefined
  /** Largest output accepted: a larger one rejects with UnitOutputTooLarge (not counted as a run's outcome). */
  maxOutputBytes?: number | undefined
}

/** The output of a unit was larger than its Unit.maxOutputBytes. */
export class UnitOutputTooLarge extends Error {}

/** What a unit's output may say of errors: those of the bot code (`errors`), an action's own `error` and whether it is `unknown`. */
interface UnitOutcome { errors?: string[] | undefined; error?: string | undefined; unknown?: boolean | undefined }

/**
 * Runs units of bot code in the sandbox: a turn (hooks, cards), an action, a beforeIncoming hook, for a
 * conversation, a webhook or a bot-level event. One way for all of them: the bot's limits (its own
 * maxExecutionTime as the per-unit budget), the runtime's series (runs, failures, duration by kind), and
 * failures worded for the bot's logs with the deployed code's source positions.
 */
export class SandboxUnits {
  private readonly clock: () => number
  private readonly runs: Counter
  private readonly failures: Counter
  private readonly runSeconds: Histogram
  private readonly sourceMaps = new Map<string, { deployedAt: BotRow['deployedAt']; map: SourceMap | undefined }>()

  constructor(
    private readonly store: Store,
    private readonly sandbox: BotSandbox,
    private readonly options: { limits: SandboxLimits; clock?: (() => number) | undefined; metrics?: MetricsRegistry | undefined },
  ) {
    this.clock = options.clock ?? Date.now
    const metrics = options.metrics ?? new MetricsRegistry()
    this.runs = metrics.counter('parley_bot_turns_total',
      'Runs of bot code in the sandbox by kind (message, event, start, webhook, bot_event, action, before_incoming) and outcome (ok, failed)', ['kind', 'outcome'])
    this.failures = metrics.counter('parley_bot_failures_total',
      'Failed runs of bot code by kind and reason: error (the code threw), timeout (PARLEY_BOT_TIMEOUT_MS / PARLEY_BOT_TURN_TIMEOUT_MS), memory (PARLEY_BOT_MEMORY_MB), crashed', ['kind', 'reason'])
    this.runSeconds = metrics.histogram('parley_bot_turn_duration_seconds', 'Wall time of runs of bot code in the sandbox by kind, in seconds', TURN_BUCKETS, ['kind'])
  }

  /**
   * Runs `unit` of the bot's code with `host` and resolves with its parsed output, the run counted by its outcome
   * (errors of the bot code: failed). Rejects as the sandbox did (a timeout, out of memory, a crash: counted too).
   */
  async run<T extends object>(bot: BotRow, unit: Unit, host: SandboxHost): Promise<T & UnitOutcome> {
    const limits = this.limitsOf(bot)
    const startedAt = performance.now()
    let raw: string
    try {
      raw = await this.sandbox.run(
        { botId: bot.id, version: String(bot.deployedAt), code: unit.code ?? bot.code!, entry: unit.entry, input: JSON.stringify({ ...unit.input, budgetMs: limits.budgetMs }), limits },
        host,
      )
    } catch (err) {
      this.observe(unit.kind, startedAt, SandboxUnits.failureOf(err))
      throw err
    }
    if (unit.maxOutputBytes !== undefined && raw.length > unit.maxOutputBytes) throw new UnitOutputTooLarge()
    const output = JSON.parse(raw) as T & UnitOutcome
    // An action failed only with its own `error` (an unknown action is the caller's 404); other units with errors of the bot code.
    const failed = unit.entry !== 'action' ? output.errors : output.error !== undefined && !output.unknown ? [...(output.errors ?? []), output.error] : undefined
    this.observe(unit.kind, startedAt, SandboxUnits.reasonOf(failed))
    return output
  }

  /** The instance's limits, with the bot's own maxExecutionTime (seconds) as its per-run budget. */
  limitsOf(bot: BotRow): SandboxLimits {
    const { limits } = this.options
    if (bot.maxExecutionTime === null) return limits
    const budgetMs = bot.maxExecutionTime * 1000
    return { ...limits, budgetMs, timeoutMs: Math.max(limits.timeoutMs, budgetMs) }
  }

  /** Text of the bot's code (a log line, an error) with the positions in its deployed bundle mapped to its sources. */
  mapPositions(bot: BotRow, text: string): string {
    return mapDeployedPositions(text, this.sourceMapOf(bot))
  }

  /** A log line of the bot's logs saying why `what` failed; limits are named with the setting that raises them. */
  failureLog(bot: BotRow, conversationId: string | null, what: string, err: unknown): BotLogRow {
    const limit = err instanceof SandboxError
      ? err.kind === 'timeout' ? ` (the whole turn's limit is ${this.options.limits.timeoutMs} ms: PARLEY_BOT_TURN_TIMEOUT_MS; each hook, card or action has ${this.limitsOf(bot).budgetMs} ms: PARLEY_BOT_TIMEOUT_MS)`
        : err.kind === 'memory' ? ` (the limit is ${Math.round(this.options.limits.memoryBytes / 1024 / 1024)} MB: PARLEY_BOT_MEMORY_MB)` : ''
      : ''
    const message = err instanceof SandboxError ? `${what} ${err.kind === 'timeout' ? 'timed out' : err.kind === 'memory' ? 'ran out of memory' : 'failed'}: ${err.message}${limit}` : `${what} failed: ${(err as Error).message}`
    return { id: uuidv7(), botId: bot.id, at: this.clock(), level: 'error', message: this.mapPositions(bot, message), conversationId }
  }

  /** Writes failureLog's line to the bot's logs (best effort). */
  async recordFailure(bot: BotRow, conversationId: string | null, what: string, err: unknown): Promise<void> {
    await this.store.appendBotLogs([this.failureLog(bot, conversationId, what, err)]).catch(() => {})
  }

  /** Counts one sandbox run (since `startedAt`) and its outcome: undefined = ok. */
  private observe(kind: RunKind, startedAt: number, failure: RunFailure | undefined): void {
    this.runSeconds.observe((performance.now() - startedAt) / 1000, { kind })
    this.runs.inc({ kind, outcome: failure ? 'failed' : 'ok' })
    if (failure) this.failures.inc({ kind, reason: failure })
  }

  /** The reason of a run that ended with errors of the bot code (caught in the sandbox): a unit's time budget, or what it threw. */
  static reasonOf(errors: string[] | undefined): RunFailure | undefined {
    if (!errors?.length) return undefined
    return errors.some((e) => BUDGET_EXCEEDED.test(e)) ? 'timeout' : 'error'
  }

  /** The reason of a run's failure: the sandbox's stop, or `error` for what the code threw. */
  static failureOf(err: unknown): RunFailure {
    return err instanceof SandboxError && err.kind !== 'error' ? err.kind : 'error'
  }

  /** The deployed code's inline source map (`parley deploy` adds one), parsed once per deployed version. */
  private sourceMapOf(bot: BotRow): SourceMap | undefined {
    if (bot.code === null) return undefined
    const cached = this.sourceMaps.get(bot.id)
    if (cached?.deployedAt === bot.deployedAt) return cached.map
    const map = SourceMap.fromCode(bot.code)
    this.sourceMaps.set(bot.id, { deployedAt: bot.deployedAt, map })
    return map
  }
}
