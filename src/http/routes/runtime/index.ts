import type { App } from '../../types.js'
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

/** One route registration per operation file (`export default function <operation>(app: App)`). */
type RuntimeRoute = (app: App) => void

/**
 * Operations of the Runtime API, the bot side of `@botpress/client` (`/v1/chat/*`). Each file registers one;
 * they are grouped by resource so that work on one group does not touch another's lines.
 */
const routes: RuntimeRoute[] = [
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
  const { auth, config } = app.services
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null as never)
  app.decorateRequest('runtimeBot', null as never)
  app.addHook('onRoute', (route) => {
    route.bodyLimit = config.runtimeBodyLimit
  })
  app.addHook('onRequest', async (request) => {
    request.principal = await auth.authenticate(request.headers.authorization)
    const botId = request.headers['x-bot-id']
    request.runtimeBot = await auth.botAccess(request.principal, Array.isArray(botId) ? undefined : botId, request.routeOptions.config.permission ?? 'runtime.write')
  })
  for (const route of routes) route(app)
}
