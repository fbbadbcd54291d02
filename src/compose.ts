import { WebchatApiService } from './domain/webchat-api-service.js'
import { WebchatUploadService } from './domain/webchat-upload-service.js'
import { join } from 'node:path'
import type { BlobStore } from './blobs/blob-store.js'
import { LocalBlobStore } from './blobs/local.js'
import type { Config } from './config.js'
import { AuthService } from './domain/auth-service.js'
import { InstallationScope } from './domain/installation-scope.js'
import { BotService } from './domain/bot-service.js'
import { BotChatService } from './domain/bot-chat-service.js'
import { ChatService } from './domain/chat-service.js'
import { ConversationLog } from './domain/conversation-log.js'
import { ConversationStreams } from './domain/conversation-stream.js'
import { FileService } from './domain/file-service.js'
import { RuntimeEventService } from './domain/runtime-event-service.js'
import { RuntimeStateService } from './domain/runtime-state-service.js'
import { RuntimeTelemetryService } from './domain/runtime-telemetry-service.js'
import { WorkflowEngine } from './domain/workflow-engine.js'
import { RecurringEventService } from './domain/recurring-event-service.js'
import { RuntimeWorkflowService } from './domain/runtime-workflow-service.js'
import { TablesService } from './domain/tables-service.js'
import { BotRemoval } from './domain/bot-removal.js'
import { AnalyticsService } from './domain/analytics-service.js'
import { LlmUsageService } from './domain/llm/llm-usage-service.js'
import { ConsoleService } from './domain/console-service.js'
import { ConversationArchiveService } from './domain/conversation-archive-service.js'
import { WebhookService } from './domain/webhook-service.js'
import { HandoffService } from './domain/handoff-service.js'
import { WorkspaceService } from './domain/workspace-service.js'
import { validateMessagePayload } from './http/schemas/validate-payload.js'
import type { Services } from './http/types.js'
import { MemoryPubSub } from './pubsub/memory.js'
import type { PubSub } from './pubsub/pubsub.js'
import { BotRuntime } from './runtime/bot-runtime.js'
import { BotDirectory } from './runtime/bot-directory.js'
import { KnowledgeAnswers } from './domain/knowledge/knowledge-answer.js'
import { AgentSteps } from './domain/agent/agent-steps.js'
import { QuickJsSandbox } from './runtime/quickjs-sandbox.js'
import { HostedProcesses } from './runtime/hosted/hosted-processes.js'
import { RemoteBots } from './runtime/remote-bots.js'
import { IntegrationDelivery } from './runtime/integrations.js'
import { IntegrationOperations } from './runtime/integration-operations.js'
import { BuiltInActions } from './domain/builtin-actions.js'
import { OutgoingDeliveries } from './runtime/integration-delivery.js'
import { PackageService } from './domain/package-service.js'
import { BotPlugins } from './domain/bot-deploy.js'
import { IntegrationService } from './domain/integration-service.js'
import { IntegrationDeclarations } from './domain/integration-declarations.js'
import type { BotSandbox } from './runtime/sandbox.js'
import type { KyselyStore } from './store/kysely/kysely-store.js'
import type { Store } from './store/store.js'
import { MetricsRegistry } from './lib/metrics.js'
import { KnowledgeEmbeddings } from './domain/knowledge/embeddings/knowledge-embeddings.js'
import { LlmGateway } from './domain/llm/llm-gateway.js'
import { LlmInterface } from './domain/llm/llm-interface.js'
import { createProviders } from './llm/providers.js'

/**
 * The composition root: the one place where a Config becomes running parts.
 * - createAdapters: the store, pub/sub and blob store the Config selects (main.ts, the test harness);
 * - createServices: the domain services on those adapters (buildApp, whoever calls it).
 * No service builds an adapter of its own: what a service stores, it stores where this says.
 */

/** The infrastructure one Parley instance runs on. */
export interface Adapters {
  store: KyselyStore
  /** MemoryPubSub on SQLite, PostgresPubSub (LISTEN/NOTIFY) on PostgreSQL. */
  pubsub: PubSub & { subscriptionCount(): number }
  /** File content and webhook bodies: `local` (`${dataDir}/blobs`) or `postgres` (config.blobStore). */
  blobs: BlobStore
}

export interface AdapterOptions {
  /**
   * Connection problems of idle pooled connections and of the LISTEN connection (the pools drop or
   * reconnect them either way). Called late: main.ts routes them to the app's logger once it exists.
   */
  onConnectionError?: (err: Error, what: string) => void
}

/** Where webhook bodies were kept before they went to the configured blob store. */
const LEGACY_WEBHOOK_BLOBS = 'webhook-blobs'

/**
 * The adapters of `config`: SQLite (`${dataDir}/parley.db`) and in-process pub/sub, or PostgreSQL
 * (config.databaseUrl) with LISTEN/NOTIFY; blobs on the local disk or in PostgreSQL (config.blobStore).
 */
export async function createAdapters(config: Config, options: AdapterOptions = {}): Promise<Adapters> {
  const warn = (what: string) => (err: Error) => options.onConnectionError?.(err, what)
  const url = config.databaseUrl
  // PostgreSQL by default when the store is there (config.ts), so every instance sees every blob.
  // Each backend's modules are imported only when the Config selects it: an instance on SQLite never loads pg (nor
  // PostgreSQL's store, pub/sub and blob store), one on PostgreSQL never loads better-sqlite3 (idle memory, #16).
  let blobs: BlobStore
  if (config.blobStore === 'postgres' && url) {
    const { createPostgresBlobStore } = await import('./blobs/postgres.js')
    blobs = createPostgresBlobStore({ url, poolSize: config.blobPoolSize, onPoolError: warn('PostgreSQL blob pool connection failed') })
  } else {
    const local = new LocalBlobStore(join(config.dataDir, 'blobs'))
    // Webhook bodies used to be kept apart, on the local disk whatever the setting: bodies of
    // deliveries still queued from before move into the blob store (same names, same layout).
    await local.adopt(join(config.dataDir, LEGACY_WEBHOOK_BLOBS))
    blobs = local
  }
  // Blobs first: the PostgreSQL blob pool connects on first use, so nothing is left open if these fail.
  if (url) {
    const [{ createPostgresStore }, { PostgresPubSub }] = await Promise.all([import('./store/postgres.js'), import('./pubsub/postgres.js')])
    const store = await createPostgresStore({ url, poolSize: config.databasePoolSize, sendAppendNotifications: true, onPoolError: warn('PostgreSQL pool connection failed') })
    const pubsub = new PostgresPubSub({ url, onError: warn('PostgreSQL LISTEN connection failed; reconnecting') })
    return { store, pubsub, blobs }
  }
  const { createSqliteStore } = await import('./store/sqlite.js')
  const store = await createSqliteStore({ file: join(config.dataDir, 'parley.db'), synchronous: config.sqliteSynchronous })
  return { store, pubsub: new MemoryPubSub(), blobs }
}

/** Closes what createAdapters opened, once nothing uses it any more (after the app closed). */
export async function closeAdapters(adapters: Adapters): Promise<void> {
  await adapters.pubsub.close()
  await adapters.blobs.close?.()
  await adapters.store.close()
}

export interface ServiceDeps {
  config: Config
  store: Store
  pubsub: PubSub
  blobs: BlobStore
  /** Where bot code runs; a QuickJS worker pool (closed by `close`) unless given. */
  sandbox?: BotSandbox | undefined
  /** The instance's logger, for what services report without failing a request. */
  warn: (context: object, message: string) => void
  info?: ((context: object, message: string) => void) | undefined
}

/** The domain services of one instance, and their lifecycle. */
export interface Domain {
  /** What routes use (decorated on the app). */
  services: Services
  webhooks: WebhookService
  /** Background work: chat notifications, the bot runtime's sweep, the webhook workers. */
  start(): Promise<void>
  /** Ends open streams, then stops background work and lets running turns finish. */
  stop(): Promise<void>
  /** Releases what was created here (the sandbox, unless it was given). */
  close(): Promise<void>
  /** The instance's one metrics registry (GET /metrics): every part's series, the HTTP ones added by the app. */
  metrics: MetricsRegistry
}

export function createServices(deps: ServiceDeps): Domain {
  const { config, store, pubsub, blobs, warn } = deps
  const sandbox = deps.sandbox ?? new QuickJsSandbox({ workers: config.sandboxWorkers, limits: config.sandboxLimits, heapBytes: config.sandboxHeapBytes })
  const metrics = new MetricsRegistry()
  // Hybrid knowledge retrieval: the vector ranking searches fuse with, and its backfill. An embeddings endpoint
  // (PARLEY_EMBEDDINGS_URL) when configured, else the built-in sentence model (PARLEY_KB_SENTENCE_MODEL, on by default),
  // else the built-in word vectors (PARLEY_KB_WORD_VECTORS, on by default).
  const log = { warn, info: deps.info ?? (() => {}) }
  const embeddings = config.embeddings
    ? KnowledgeEmbeddings.fromSettings(store.passageVectors, config.embeddings, log)
    : config.kbSentenceModel ? KnowledgeEmbeddings.sentenceModel(store.passageVectors, log)
    : config.kbWordVectors ? KnowledgeEmbeddings.builtin(store.passageVectors, log) : undefined
  // Deployed bundles (bp deploy): their processes, reached through the delivery paths' `parley-hosted:` urls.
  const hosted = new HostedProcesses(store, config.hosted)
  hosted.registerMetrics(metrics)
  const remote = new RemoteBots(store, config.remoteBots, config.delivery, { outbound: config.outbound, hosted })
  remote.registerMetrics(metrics)
  sandbox.registerMetrics?.(metrics)
  embeddings?.registerMetrics(metrics)
  // Built in one direction: the bot directory, what the runtime acts on (bots, handoffs, tables), the runtime, the Chat API.
  const directory = new BotDirectory(store, pubsub, sandbox, {
    onBotsChanged: (botId) => {
      chat.forgetIntegrations()
      // A bot deleted, or no longer hosted (a module or a url replaced its bundle): its process stops now, not when idle.
      void hosted.ownerChanged('bot', botId)
    },
  })
  const recurring = new RecurringEventService(store)
  // Integrations served elsewhere, and what goes to them (register, unregister, events, actions).
  const integrations = new IntegrationService(store, { outbound: config.outbound })
  const delivery = new IntegrationDelivery(store, remote, integrations, () => config.webhookPublicUrl ?? config.publicUrl)
  // What installed integrations' definitions declare (action and event schemas, states): read by the Runtime API's services.
  const declarations = new IntegrationDeclarations(integrations)
  const runtimeStates = new RuntimeStateService(store, { integrationStates: (bot) => declarations.stateDeclarations(bot) })
  const packages = new PackageService(store)
  const bots = new BotService(store, {
    outbound: config.outbound,
    installer: integrations,
    // updateBot waits for register (its outcome is the installation's status); unregister runs in the background.
    onInstalled: (bot, installation, operation) => delivery.lifecycle(bot, installation, operation),
    plugins: new BotPlugins(store, packages),
    states: runtimeStates,
    recurring,
    checkCode: async (code) => {
      const result = await sandbox.check(code)
      return result.ok ? undefined : result.error
    },
    onChanged: (botId) => directory.botChanged(botId),
    // Best effort, in the background: no request waits for a remote bot.
    onUrlChanged: (bot) => void remote.register(bot),
  })
  const files = new FileService({ config, store, blobs, warn, embeddings })
  // The conversation log's one append path (messages and events), shared by the Chat API, the Runtime API, bot code and handoffs.
  const conversationLog = new ConversationLog(store, pubsub)
  const handoffs = new HandoffService(store, conversationLog, bots, {
    turnNotification: (integrationId, conversationId) => directory.turnNotification(integrationId, conversationId),
    validatePayload: validateMessagePayload,
    metrics,
    files,
  })
  const tables = new TablesService(store, { jobs: { ...config.tablesJobs, maxFileBytes: config.maxFileBytes, warn, files } })
  // LLM usage accounting (docs/llm-usage.md): the gateway's admit/record, budgets, getBotAnalytics().llm.
  const llmUsage = new LlmUsageService(store, bots, config.llmBudgets, { warn })
  llmUsage.registerMetrics(metrics)
  // The LLM gateway (docs/llm.md) on the configured providers: every call admitted and recorded by llmUsage (docs/llm-usage.md).
  const llm = new LlmGateway(config.llm, createProviders(config.llm), llmUsage, metrics, log)
  // The configured providers as integrations implementing Botpress's `llm` interface (zai's and cognitive's default path).
  const llmInterface = new LlmInterface(llm)
  // ping, create_user/create_conversation, checked actions, disabled channels, secrets.
  const integrationOps = new IntegrationOperations(store, integrations, delivery, new BuiltInActions(store, conversationLog), declarations, llmInterface)
  // Bot messages in an installed integration's conversations: sent as message_created from the conversation's log (durable, leased).
  const outgoing = new OutgoingDeliveries(store, remote, integrations, delivery, { sweepMs: config.botSweepMs, metrics })
  const runtime = new BotRuntime(store, pubsub, sandbox, {
    // The Chat API's domain, built around the runtime's incoming side: ChatService runs the bot's beforeIncoming hook,
    // whose code's client is BotChatService, built on ChatService (the one cycle, tied in BotRuntime's constructor).
    domain: (incoming) => {
      const chat = new ChatService(store, pubsub, conversationLog, incoming)
      const botChat = new BotChatService(store, pubsub, conversationLog, chat, {
        onOutgoing: (integration, message) => outgoing.notify(integration, message),
        operations: integrationOps,
        validatePayload: validateMessagePayload,
        maxConcurrentCreates: Math.max(1, Math.floor((config.databasePoolSize - 1) / 2)),
      })
      return { chat, botChat, integrationActions: (bot, type, input) => integrationOps.callAction(bot, type, input) }
    },
    remote,
    metrics,
    limits: config.sandboxLimits,
    sweepMs: config.botSweepMs,
    validatePayload: validateMessagePayload,
    directory,
    handoffs,
    tables,
    knowledgeAnswers: config.kbAnswer && new KnowledgeAnswers(llm, pubsub, { ...config.kbAnswer, warn }),
    agentSteps: config.llm.providers.length > 0 ? new AgentSteps(llm, pubsub, store, { model: config.kbAnswer?.model ?? 'best' }) : undefined,
    semanticRanking: embeddings,
    kbMinScore: config.kbMinScore,
    llm,
  })
  const { chat, botChat } = runtime.domain
  const streams = new ConversationStreams(store, pubsub, chat, { replayMs: config.chatListenReplayMs })
  metrics.collect('parley_sse_open_streams', 'Open SSE streams (listenConversation) on this instance', () => streams.openCount)
  // Workflows run (docs/workflows.md): their changes queue workflow_update events, which the event queue delivers.
  const workflowEngine = new WorkflowEngine(store, { continueMs: config.workflowContinueMs, maxContinueMs: config.workflowContinueMaxMs })
  const runtimeWorkflows = new RuntimeWorkflowService(store, { events: workflowEngine.events })
  const runtimeEvents = new RuntimeEventService({
    store, chat, delivery: runtime, states: runtimeStates, workflows: runtimeWorkflows, workflowEngine, recurring, pollMs: config.runtimeEventPollMs, warn,
    integrationEvents: (bot, input) => declarations.eventInput(bot, input),
  })
  const webhooks = new WebhookService({ config, store, runtime, blobs, warn })
  // Deleting a bot removes what it has outside its rows: file blobs and passages, table indexes, queued webhook bodies.
  const botRemoval = new BotRemoval(bots, [
    { prepare: (botId) => files.prepareBotCleanup(botId) },
    { prepare: (botId) => tables.prepareBotCleanup(botId) },
    { prepare: () => webhooks.prepareBotCleanup() },
  ])
  const webchatUploads = new WebchatUploadService(store, files, config.maxFileBytes)
  const services: Services = {
    config, chat, botChat, streams, store, bots, integrations, packages, integrationDelivery: delivery, outgoingDeliveries: outgoing, integrationOps, files, runtime, remote, runtimeStates, runtimeWorkflows, runtimeEvents, tables,
    analytics: new AnalyticsService(store, bots, llmUsage),
    llmUsage,
    handoffs,
    console: new ConsoleService(store, config.console),
    archive: new ConversationArchiveService(store, bots),
    webchatUploads,
    webchatApi: new WebchatApiService(store, chat, webchatUploads),
    runtimeTelemetry: new RuntimeTelemetryService(store, { observationsKept: config.runtimeObservationsKept }),
    auth: new AuthService(store),
    installationScope: new InstallationScope(store),
    workspaces: new WorkspaceService(store, botRemoval),
    botRemoval,
    llm,
    llmInterface,
  }
  return {
    services,
    webhooks,
    async start() {
      await chat.start()
      await runtime.start()
      webhooks.start()
      runtimeEvents.start()
      embeddings?.start()
      await outgoing.start()
    },
    async stop() {
      await streams.closeAll()
      await webhooks.stop()
      await runtimeEvents.stop()
      await embeddings?.stop()
      await outgoing.stop()
      await runtime.stop()
      await hosted.close()
      await chat.stop()
      // the records of the last model calls, whose answers went out before them (LlmUsage.record)
      await llmUsage.settled()
    },
    async close() {
      if (!deps.sandbox) await sandbox.close()
    },
    metrics,
  }
}
