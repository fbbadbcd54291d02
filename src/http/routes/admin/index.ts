import type { App } from '../../types.js'
import { assertCan } from '../../../domain/permissions.js'
import getAccount from './account/get-account.js'
import listPersonalAccessTokens from './account/list-personal-access-tokens.js'
import createPersonalAccessToken from './account/create-personal-access-token.js'
import deletePersonalAccessToken from './account/delete-personal-access-token.js'
import listWorkspaces from './workspaces/list-workspaces.js'
import createWorkspace from './workspaces/create-workspace.js'
import getWorkspace from './workspaces/get-workspace.js'
import updateWorkspace from './workspaces/update-workspace.js'
import deleteWorkspace from './workspaces/delete-workspace.js'
import checkHandleAvailability from './workspaces/check-handle-availability.js'
import listWorkspaceMembers from './members/list-workspace-members.js'
import getWorkspaceMember from './members/get-workspace-member.js'
import createWorkspaceMember from './members/create-workspace-member.js'
import updateWorkspaceMember from './members/update-workspace-member.js'
import deleteWorkspaceMember from './members/delete-workspace-member.js'
import listBots from './bots/list-bots.js'
import getBot from './bots/get-bot.js'
import createBot from './bots/create-bot.js'
import updateBot from './bots/update-bot.js'
import deleteBot from './bots/delete-bot.js'
import createBotApiKey from './bots/create-bot-api-key.js'
import listBotApiKeys from './bots/list-bot-api-keys.js'
import deleteBotApiKey from './bots/delete-bot-api-key.js'
import getBotLogs from './bots/get-bot-logs.js'
import getBotWebchat from './bots/get-bot-webchat.js'
import getBotAnalytics from './bots/get-bot-analytics.js'
import getBotQualityAnalytics from './bots/get-bot-quality-analytics.js'
import getBotLlmBudget from './bots/get-bot-llm-budget.js'
import updateBotLlmBudget from './bots/update-bot-llm-budget.js'
import getWorkspaceLlmBudget from './workspaces/get-workspace-llm-budget.js'
import updateWorkspaceLlmBudget from './workspaces/update-workspace-llm-budget.js'
import listBotHandoffs from './handoffs/list-bot-handoffs.js'
import createBotHandoff from './handoffs/create-bot-handoff.js'
import getBotHandoff from './handoffs/get-bot-handoff.js'
import claimBotHandoff from './handoffs/claim-bot-handoff.js'
import createBotHandoffMessage from './handoffs/create-bot-handoff-message.js'
import endBotHandoff from './handoffs/end-bot-handoff.js'
import getBotHandoffStats from './handoffs/get-bot-handoff-stats.js'
import createIntegration from './integrations/create-integration.js'
import getIntegration from './integrations/get-integration.js'
import getIntegrationByName from './integrations/get-integration-by-name.js'
import listIntegrations from './integrations/list-integrations.js'
import updateIntegration from './integrations/update-integration.js'
import validateIntegrationCreation from './integrations/validate-integration-creation.js'
import validateIntegrationUpdate from './integrations/validate-integration-update.js'
import deleteIntegration from './integrations/delete-integration.js'
import getIntegrationLogs from './integrations/get-integration-logs.js'
import createIntegrationApiKey from './integrations/create-integration-api-key.js'
import listIntegrationApiKeys from './integrations/list-integration-api-keys.js'
import deleteIntegrationApiKey from './integrations/delete-integration-api-key.js'
import pingBotIntegration from './integrations/ping-bot-integration.js'
import createInterface from './interfaces/create-interface.js'
import updateInterface from './interfaces/update-interface.js'
import getInterface from './interfaces/get-interface.js'
import getInterfaceByName from './interfaces/get-interface-by-name.js'
import getPublicInterface from './interfaces/get-public-interface.js'
import getPublicInterfaceById from './interfaces/get-public-interface-by-id.js'
import createPlugin from './plugins/create-plugin.js'
import updatePlugin from './plugins/update-plugin.js'
import getPlugin from './plugins/get-plugin.js'
import getPluginByName from './plugins/get-plugin-by-name.js'
import getPublicPlugin from './plugins/get-public-plugin.js'
import getPublicPluginById from './plugins/get-public-plugin-by-id.js'
import getPublicIntegration from './integrations/get-public-integration.js'
import getPublicIntegrationById from './integrations/get-public-integration-by-id.js'
import listBotConversations from './bots/list-bot-conversations.js'
import getBotConversationTranscript from './bots/get-bot-conversation-transcript.js'
import exportBotConversations from './bots/export-bot-conversations.js'
import listenBotConversation from './bots/listen-bot-conversation.js'
import createBotHandoffFileUpload from './handoffs/create-bot-handoff-file-upload.js'
import createConsoleSignInLink from './account/create-console-sign-in-link.js'
import listConsoleSessions from './account/list-console-sessions.js'
import revokeConsoleSession from './account/revoke-console-session.js'
import revokeConsoleSessions from './account/revoke-console-sessions.js'

/**
 * The Admin API under /v1/admin. Auth is decided by scope:
 * - every route needs a valid Bearer personal access token (401 otherwise; bot keys get 403, but for getBot of
 *   their own bot, read as a viewer: `config.ownBotKey`);
 * - account routes (the caller's account, tokens, workspace list/create, workspaces by path id) need nothing more;
 * - workspace routes also need x-workspace-id (401 when missing or unknown, 403 for non-members),
 *   and the route's `config.permission` is checked against the caller's role here, in one place.
 */
export async function adminRoutes(app: App): Promise<void> {
  app.decorateRequest('principal', null as never)
  app.decorateRequest('account', null as never)
  app.decorateRequest('workspace', null as never)
  app.decorateRequest('role', null as never)

  // Admin bodies may carry bot code: the spec's 50 MB limit instead of the default 1 MB.
  app.addHook('onRoute', (route) => {
    route.bodyLimit = app.services.config.adminBodyLimit
  })
  app.addHook('onRequest', async (request) => {
    request.principal = await app.services.auth.authenticateAdmin(request.headers)
    // A bot API key reads its own bot (getBot), as Botpress's bots do with their token; every other route is refused.
    if (request.principal.kind === 'bot' && request.routeOptions.config.ownBotKey === true) return
    request.account = app.services.auth.requireAccount(request.principal)
  })

  for (const route of [
    getAccount, listPersonalAccessTokens, createPersonalAccessToken, deletePersonalAccessToken, createConsoleSignInLink,
    listConsoleSessions, revokeConsoleSession, revokeConsoleSessions,
    listWorkspaces, createWorkspace, getWorkspace, updateWorkspace, deleteWorkspace, checkHandleAvailability,
  ]) route(app)

  await app.register(async function workspaceScoped(scope: App) {
    scope.addHook('onRequest', async (request) => {
      const header = request.headers['x-workspace-id']
      const { workspace, role } = request.principal.kind === 'bot'
        ? await app.services.auth.ownBotRole(request.principal)
        : await app.services.auth.workspaceRole(request.principal, Array.isArray(header) ? undefined : header)
      request.workspace = workspace
      request.role = role
      const permission = request.routeOptions.config.permission
      if (permission) assertCan(role, permission)
    })
    for (const route of [
      listWorkspaceMembers, getWorkspaceMember, createWorkspaceMember, updateWorkspaceMember, deleteWorkspaceMember,
      listBots, getBot, createBot, updateBot, deleteBot, getBotLogs, getBotWebchat, getBotAnalytics, getBotQualityAnalytics, getBotLlmBudget, updateBotLlmBudget, getWorkspaceLlmBudget, updateWorkspaceLlmBudget, createBotApiKey, listBotApiKeys, deleteBotApiKey,
      listBotConversations, getBotConversationTranscript, exportBotConversations, listenBotConversation,
      listBotHandoffs, createBotHandoff, getBotHandoff, claimBotHandoff, createBotHandoffMessage, createBotHandoffFileUpload, endBotHandoff, getBotHandoffStats,
      createIntegration, validateIntegrationCreation, getIntegration, getIntegrationByName, listIntegrations, updateIntegration, validateIntegrationUpdate, deleteIntegration, getIntegrationLogs, createIntegrationApiKey, listIntegrationApiKeys, deleteIntegrationApiKey, pingBotIntegration,
      createInterface, updateInterface, getInterface, getInterfaceByName, getPublicInterface, getPublicInterfaceById, createPlugin, updatePlugin, getPlugin, getPluginByName, getPublicPlugin, getPublicPluginById, getPublicIntegration, getPublicIntegrationById,
    ]) route(scope)
  })
}
