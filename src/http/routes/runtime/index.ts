import { registerBotScope } from '../../plugins/bot-scope.js'
import type { App } from '../../types.js'
import { ROUTE_VIEWS, type BotOperation, type RuntimeContext } from '../../operations/operation.js'
import { registerOperation } from '../../operations/routes.js'
import createConversation from './conversations/create-conversation.js'
import getConversation from './conversations/get-conversation.js'
import listConversations from './conversations/list-conversations.js'
import getOrCreateConversation from './conversations/get-or-create-conversation.js'
import updateConversation from './conversations/update-conversation.js'
import deleteConversation from './conversations/delete-conversation.js'
import startConversationHandoff from './conversations/start-conversation-handoff.js'
import endConversationHandoff from './conversations/end-conversation-handoff.js'
import listParticipants from './participants/list-participants.js'
import addParticipant from './participants/add-participant.js'
import getParticipant from './participants/get-participant.js'
import removeParticipant from './participants/remove-participant.js'
import createMessage from './messages/create-message.js'
import getOrCreateMessage from './messages/get-or-create-message.js'
import getMessage from './messages/get-message.js'
import updateMessage from './messages/update-message.js'
import listMessages from './messages/list-messages.js'
import deleteMessage from './messages/delete-message.js'
import initializeIncomingMessage from './messages/initialize-incoming-message.js'
import importMessages from './messages/import-messages.js'
import createUser from './users/create-user.js'
import getUser from './users/get-user.js'
import listUsers from './users/list-users.js'
import getOrCreateUser from './users/get-or-create-user.js'
import updateUser from './users/update-user.js'
import deleteUser from './users/delete-user.js'
import listTagValues from './tags/list-tag-values.js'
import callAction from './actions/call-action.js'
import captureObservation from './capture-observation.js'
import configureIntegration from './configure-integration.js'
import trackAnalytics from './track-analytics.js'
import cancelScheduledEvent from './cancel-scheduled-event.js'
import createEvent from './create-event.js'
import getEvent from './get-event.js'
import listEvents from './list-events.js'
import createWorkflow from './create-workflow.js'
import deleteWorkflow from './delete-workflow.js'
import getOrCreateWorkflow from './get-or-create-workflow.js'
import getWorkflow from './get-workflow.js'
import listWorkflows from './list-workflows.js'
import updateWorkflow from './update-workflow.js'
import getOrSetState from './get-or-set-state.js'
import getState from './get-state.js'
import patchState from './patch-state.js'
import setStateExpiry from './set-state-expiry.js'
import setState from './set-state.js'

/**
 * One route per operation file: an operation of the table (src/http/operations, the ones bot code's client
 * calls too), or a route registration (`export default function <operation>(app: App)`).
 */
type RuntimeRoute = ((app: App) => void) | BotOperation<RuntimeContext>

/**
 * Operations of the Runtime API, the bot side of `@botpress/client` (`/v1/chat/*`). Each file registers one;
 * they are grouped by resource so that work on one group does not touch another's lines.
 */
const routes: RuntimeRoute[] = [
  // conversations
  createConversation, getConversation, listConversations, getOrCreateConversation, updateConversation, deleteConversation,
  // human handoff (Parley)
  startConversationHandoff, endConversationHandoff,
  // participants
  listParticipants, addParticipant, getParticipant, removeParticipant,
  // messages
  createMessage, getOrCreateMessage, getMessage, updateMessage, listMessages, deleteMessage, initializeIncomingMessage, importMessages,
  // users
  createUser, getUser, listUsers, getOrCreateUser, updateUser, deleteUser,
  // tags
  listTagValues,
  // actions
  callAction,
  // states
  getState, setState, getOrSetState, patchState, setStateExpiry,
  // events
  createEvent, getEvent, listEvents, cancelScheduledEvent,
  // workflows
  createWorkflow, getOrCreateWorkflow, getWorkflow, updateWorkflow, deleteWorkflow, listWorkflows,
  // what a bot reports about itself
  trackAnalytics, captureObservation, configureIntegration,
]

/**
 * The Runtime API under /v1/chat: what a bot (its own code, or a program served elsewhere) calls.
 * `Authorization: Bearer <token>` (the bot's API key, or a member's personal access token whose role
 * allows the route's permission on the bot's workspace) and `x-bot-id` (401 when missing or unknown,
 * 403 for another bot's key or a role without the permission); the bot's data only (another bot's or
 * workspace's resources are 404). Body limit: the spec's Runtime 1 MB (413).
 * x-integration-id/-alias are accepted and ignored.
 */
export async function runtimeRoutes(app: App): Promise<void> {
  registerBotScope(app, { key: 'runtimeBot', bodyLimit: app.services.config.runtimeBodyLimit, defaultPermission: 'runtime.write' })
  const { botChat } = app.services
  for (const route of routes) {
    if (typeof route === 'function') route(app)
    else registerOperation(app, route, (request) => ({ bot: request.runtimeBot, botChat, views: ROUTE_VIEWS }))
  }
}
