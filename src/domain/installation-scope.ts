import { errors } from '../lib/errors.js'
import type { BotRow, IntegrationRow, Store } from '../store/store.js'
import { integrationScope } from './bot-chat-service.js'

/** The kinds of Runtime API resources a request can name by id. */
export type InstallationResource = 'conversation' | 'user' | 'message' | 'workflow' | 'event'

/** One resource a Runtime request names (an undefined id names nothing). */
export type InstallationRef =
  | { kind: InstallationResource; id: string | undefined }
  /** A state's resource: `type` as in the path (conversation, user, workflow, bot, integration). */
  | { kind: 'state'; type: string; id: string }
  /** callAction's `type` (`alias:action`). */
  | { kind: 'action'; id: string }

/**
 * What a Runtime route names, declared once on the route (`config.installation`) and checked for an
 * integration key by the Runtime scope's hook (src/http/plugins/bot-scope.ts): the request's params,
 * body or query fields holding ids, by kind; or a function for shapes a field map cannot say.
 * A route without a declaration does not start.
 */
export type InstallationDeclaration =
  | { params?: Record<string, InstallationResource>; body?: Record<string, InstallationResource>; query?: Record<string, InstallationResource> }
  | ((request: { params: unknown; body: unknown; query: unknown }) => InstallationRef[])

const LABEL: Record<InstallationResource, string> = { conversation: 'Conversation', user: 'User', message: 'Message', workflow: 'Workflow', event: 'Event' }

/** The refs a declaration names in one request. */
export function declaredRefs(declaration: InstallationDeclaration, request: { params: unknown; body: unknown; query: unknown }): InstallationRef[] {
  if (typeof declaration === 'function') return declaration(request)
  const refs: InstallationRef[] = []
  for (const part of ['params', 'body', 'query'] as const) {
    const fields = declaration[part]
    const values = request[part]
    if (!fields || typeof values !== 'object' || values === null) continue
    for (const [field, kind] of Object.entries(fields)) {
      const id = (values as Record<string, unknown>)[field]
      if (typeof id === 'string') refs.push({ kind, id })
    }
  }
  return refs
}

/**
 * The one answer to "does this resource belong to the integration's installation?" for an integration
 * API key (`iak_…`) on the Runtime API. The key acts for the bot through one installation
 * (IntegrationService.callerInstallation); every resource a request names must be that installation's:
 * - conversations, users and messages of its integration row (the bot's own user, id = the bot id, too);
 * - workflows and Runtime events its key created (their installation_id), and the Chat API's events of its conversations;
 * - states on those resources, on its installation (type `integration`: its id, alias or definition id) or on the bot
 *   (its own namespaced states);
 * - actions of its own installation (`alias:action`).
 * Anything else answers 404 ResourceNotFound, as a resource that does not exist does. Lists are filtered by the
 * services (BotChatService, RuntimeWorkflowService, RuntimeEventService) with the same rule.
 * Bot keys and members' tokens are not concerned: for them this check passes.
 */
export class InstallationScope {
  constructor(private readonly store: Store) {}

  async assert(bot: BotRow, refs: InstallationRef[], definitionId?: string): Promise<void> {
    const scope = integrationScope(bot)
    if (!scope) return
    for (const ref of refs) {
      if (ref.id === undefined) continue
      if (!(await this.belongs(bot, scope, ref, definitionId))) throw notFound(ref)
    }
  }

  private async belongs(bot: BotRow, scope: IntegrationRow, ref: InstallationRef, definitionId: string | undefined): Promise<boolean> {
    const id = ref.id!
    if (id.length === 0 || id.length > 200) return false
    switch (ref.kind) {
      case 'conversation':
        return (await this.store.getConversation(scope.id, id)) !== undefined
      case 'user':
        return id === bot.id || (await this.store.getUser(scope.id, id)) !== undefined
      case 'message':
        return (await this.store.getMessage(scope.id, id)) !== undefined
      case 'workflow':
        return (await this.store.workflows.get(bot.id, id))?.installationId === scope.id
      case 'event': {
        const event = await this.store.runtimeEvents.get(bot.id, id)
        if (event) return event.installationId === scope.id
        return (await this.store.getEvent(scope.id, id)) !== undefined
      }
      case 'state':
        if (ref.type === 'integration') return id === scope.id || id === scope.name || (definitionId !== undefined && id === definitionId)
        if (ref.type === 'bot') return id === bot.id
        if (ref.type === 'conversation' || ref.type === 'user' || ref.type === 'workflow') return this.belongs(bot, scope, { kind: ref.type, id }, definitionId)
        return true // an unknown type: the state service answers 400
      case 'action':
        return id.startsWith(`${scope.name}:`)
    }
  }
}

function notFound(ref: InstallationRef) {
  if (ref.kind === 'action') return errors.notFound('Action', ref.id)
  if (ref.kind === 'state') return errors.notFound(ref.type in LABEL ? LABEL[ref.type as InstallationResource] : ref.type === 'bot' ? 'Bot' : 'Integration', ref.id)
  return errors.notFound(LABEL[ref.kind], ref.id!)
}
