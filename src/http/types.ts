import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config.js'
import type { ChatService } from '../domain/chat-service.js'
import type { ConversationStreams } from '../domain/conversation-stream.js'
import type { Store } from '../store/store.js'
import type { IntegrationRow, UserRow } from '../store/store.js'

/** What routes may use: domain services only (no store access from routes, except readiness). */
export interface Services {
  config: Config
  chat: ChatService
  streams: ConversationStreams
  store: Pick<Store, 'ping'>
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
  }
}
