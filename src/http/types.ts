import type { PackageService } from '../domain/package-service.js'
import type { IntegrationService } from '../domain/integration-service.js'
import type { IntegrationDelivery } from '../runtime/integrations.js'
import type { IntegrationOperations } from '../runtime/integration-operations.js'
import type { OutgoingDeliveries } from '../runtime/integration-delivery.js'
import type { WebchatUploadService } from '../domain/webchat-upload-service.js'
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config.js'
import type { InstallationDeclaration, InstallationScope } from '../domain/installation-scope.js'
import type { AuthService, Principal } from '../domain/auth-service.js'
import type { BotService } from '../domain/bot-service.js'
import type { ChatService } from '../domain/chat-service.js'
import type { BotChatService } from '../domain/bot-chat-service.js'
import type { FileService } from '../domain/file-service.js'
import type { TablesService } from '../domain/tables-service.js'
import type { ConsoleService } from '../domain/console-service.js'
import type { ConversationArchiveService } from '../domain/conversation-archive-service.js'
import type { AnalyticsService } from '../domain/analytics-service.js'
import type { HandoffService } from '../domain/handoff-service.js'
import type { Permission, Role } from '../domain/permissions.js'
import type { WorkspaceService } from '../domain/workspace-service.js'
import type { BotRemoval } from '../domain/bot-removal.js'
import type { RuntimeEventService } from '../domain/runtime-event-service.js'
import type { RuntimeStateService } from '../domain/runtime-state-service.js'
import type { RuntimeTelemetryService } from '../domain/runtime-telemetry-service.js'
import type { RuntimeWorkflowService } from '../domain/runtime-workflow-service.js'
import type { ConversationStreams } from '../domain/conversation-stream.js'
import type { Store } from '../store/store.js'
import type { LlmGateway } from '../domain/llm/llm-gateway.js'
import type { LlmInterface } from '../domain/llm/llm-interface.js'
import type { BotRuntime } from '../runtime/bot-runtime.js'
import type { RemoteBots } from '../runtime/remote-bots.js'
import type { WebchatApiService } from '../domain/webchat-api-service.js'
import type { LlmUsageService } from '../domain/llm/llm-usage-service.js'
import type { AccountRow, IntegrationRow, UserRow, WorkspaceRow } from '../store/store.js'

/** What routes may use: domain services only (no store access from routes, except readiness). */
export interface Services {
  config: Config
  chat: ChatService
  /** A bot's chat data for the Runtime API (and the sandboxed bot's client). */
  botChat: BotChatService
  streams: ConversationStreams
  auth: AuthService
  workspaces: WorkspaceService
  /** Deletes bots with what they have outside their rows (domain/bot-removal.ts). */
  botRemoval: BotRemoval
  bots: BotService
  files: FileService
  /** A webchat user's file upload (Chat API createFileUpload), through the Files API. */
  webchatUploads: WebchatUploadService
  /** Botpress's webchat API over the Chat API's domain (routes/webchat-api). */
  webchatApi: WebchatApiService
  /** The Tables API (and the sandboxed bot's client's table operations). */
  tables: TablesService
  /** getBotAnalytics: a bot's activity per day. */
  analytics: AnalyticsService
  /** LLM usage: the gateway's admit/record, budgets (docs/llm-usage.md). */
  llmUsage: LlmUsageService
  /** Human handoff: the Admin API's inbox operations and the Runtime API's start/end. */
  handoffs: HandoffService
  /** Console sign-in: sessions and one-time links. */
  console: ConsoleService
  /** The console's conversation search, transcripts and exports. */
  archive: ConversationArchiveService
  runtime: BotRuntime
  /** Deliveries to bots with a `url` (remote @botpress/sdk programs). */
  remote: RemoteBots
  /** Runtime API states and the bots' state declarations. */
  runtimeStates: RuntimeStateService
  /** Runtime API workflows (data only). */
  runtimeWorkflows: RuntimeWorkflowService
  /** Runtime API events and their delivery (scheduled, bot-level, state_expired). */
  runtimeEvents: RuntimeEventService
  /** Whether a resource named by a Runtime request belongs to the calling integration key's installation. */
  installationScope: InstallationScope
  /** trackAnalytics, captureObservation, configureIntegration. */
  runtimeTelemetry: RuntimeTelemetryService
  /** Integrations served elsewhere: definitions, keys, installations (issue #19). */
  integrations: IntegrationService
  /** Interface and plugin definitions (`bp deploy`; issue #26). */
  packages: PackageService
  /** The integration protocol: webhook_received, message_created, action_triggered, register. */
  integrationDelivery: IntegrationDelivery
  /** An installation's ping, create_user/create_conversation, events, states, disabled channels and secrets. */
  integrationOps: IntegrationOperations
  /** Bot messages sent to installed integrations (message_created), from the conversations' logs. */
  outgoingDeliveries: OutgoingDeliveries
  store: Pick<Store, 'ping'>
  /** The LLM gateway: the v2 cognitive API's generations and model list (docs/llm.md). */
  llm: LlmGateway
  /** The configured providers as integrations implementing the `llm` interface (getBot lists them). */
  llmInterface: LlmInterface
}

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
  }
  interface FastifyRequest {
    /** The chat integration named by the :webhookId path segment (Chat API scope). */
    integration: IntegrationRow
    /** The user designated by x-user-key (authenticated Chat API scope). */
    chatUser: UserRow
    /** The Bearer token's owner (Admin and Files APIs). */
    principal: Principal
    /** The authenticated account (Admin API). */
    account: AccountRow
    /** The x-workspace-id workspace and the caller's role in it (workspace-scoped Admin routes). */
    workspace: WorkspaceRow
    role: Role
  }
  interface FastifyContextConfig {
    /** What the caller's workspace role must allow for this route (checked by the scope's hook). */
    permission?: Permission
    /** Runtime API: the resources the route names, checked for an integration key (src/domain/installation-scope.ts). */
    installation?: InstallationDeclaration
    /** Admin API: a bot API key may call this route for its own bot, as a viewer (getBot: what zai and cognitive read). */
    ownBotKey?: boolean
  }
}
