/**
 * `bp deploy` and `bp login` of the official Botpress CLI (5.5.6, packages/cli at the corpus commit), call by call
 * through the unchanged @botpress/client@1.45.0: the same operations, in the same order, with the same bodies
 * (src/command-implementations/deploy-command.ts, login-command.ts, project-command.ts, src/api/*-body.ts).
 * Prompts are answered yes; `handle` answers "Please enter a workspace handle".
 * Each function returns the operations it called, so a test can compare them with the CLI's.
 */
import { Client, isApiError } from '@botpress/client'

type Body = Record<string, unknown>
type Rec = Record<string, unknown>

/** The CLI's client: retry off here, and its `x-multiple-integrations` header. */
export function cliClient(apiUrl: string, token: string, workspaceId?: string, botId?: string): Client {
  return new Client({ apiUrl, token, ...(workspaceId !== undefined && { workspaceId }), ...(botId !== undefined && { botId }), headers: { 'x-multiple-integrations': 'true' } })
}

/** Records the operations called on a client (the CLI's sequence). */
export function traced(client: Client, calls: string[]): Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown
      if (typeof v !== 'function' || typeof prop !== 'string') return v
      return (...args: unknown[]) => {
        calls.push(prop)
        return (v as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}

const undefinedOn404 = (thrown: unknown): undefined => {
  if (isApiError(thrown) && thrown.type === 'ResourceNotFound') return undefined
  throw thrown
}

/** utils.records.setNullOnMissingValues */
const setNull = (local: Rec = {}, remote: Rec = {}): Rec => {
  const out: Rec = { ...local }
  for (const k of Object.keys(remote)) if (!local[k]) out[k] = null
  return out
}

/** `bp login --token … --workspaceId …` without --workspaceId: list the workspaces, then test the login. */
export async function cliLogin(apiUrl: string, token: string, calls: string[] = []): Promise<string> {
  const tmp = traced(cliClient(apiUrl, token), calls)
  const workspaces: { id: string }[] = []
  for (let nextToken: string | undefined; ;) {
    const r = await tmp.listWorkspaces({ nextToken })
    workspaces.push(...r.workspaces)
    nextToken = r.meta.nextToken
    if (!nextToken) break
  }
  const workspaceId = workspaces[0]!.id
  await traced(cliClient(apiUrl, token, workspaceId), calls).listBots({})
  return workspaceId
}

/** ApiClient.findPublicOrPrivateIntegration by name: the workspace's first, then the hub. */
async function findIntegration(c: Client, name: string, version: string) {
  return (await c.getIntegrationByName({ name, version }).then((r) => r.integration).catch(undefinedOn404))
    ?? (await c.getPublicIntegration({ name, version }).then((r) => r.integration).catch(undefinedOn404))
}

async function getIntegration(c: Client, name: string, version: string) {
  const found = await findIntegration(c, name, version)
  if (!found) throw new Error(`Integration "${name}@${version}" not found`)
  return found
}

async function getPublicInterface(c: Client, name: string, version: string) {
  const found = await c.getPublicInterface({ name, version }).then((r) => r.interface).catch(undefinedOn404)
  if (!found) throw new Error(`Interface "${name}@${version}" not found`)
  return found
}

/** DeployCommand._manageWorkspaceHandle (the workspace has no handle; the integration name has none either or one). */
export async function cliManageHandle(c: Client, workspaceId: string, integrationName: string, prompted?: string): Promise<string> {
  const [localHandle, localName] = integrationName.includes('/') ? integrationName.split('/') as [string, string] : [undefined, integrationName]
  const { handle: remoteHandle } = await c.getWorkspace({ id: workspaceId })
  if (localHandle && remoteHandle) {
    if (localHandle !== remoteHandle) {
      const { workspaces } = await c.listWorkspaces({ handle: localHandle })
      if (!workspaces[0]) throw new Error(`The integration handle "${localHandle}" is not associated with any of your workspaces.`)
    }
    return integrationName
  }
  if (!localHandle && remoteHandle) return `${remoteHandle}/${localName}`
  const handle = localHandle ?? prompted
  if (!handle) throw new Error('Cannot deploy integration without workspace handle')
  const { available, suggestions } = await c.checkHandleAvailability({ handle })
  if (!available) throw new Error(`Handle "${handle}" is not available. Suggestions: ${suggestions.join(', ')}`)
  await c.updateWorkspace({ id: workspaceId, handle })
  return `${handle}/${localName}`
}

/** DeployCommand._deployInterface: `body` as prepareCreateInterfaceBody makes it (icon/readme base64). */
export async function cliDeployInterface(c: Client, body: Body & { name: string; version: string }, visibility: 'public' | 'private' = 'public') {
  const { name, version } = body
  const existing = (await c.getInterfaceByName({ name, version }).then((r) => r.interface).catch(undefinedOn404))
    ?? (await c.getPublicInterface({ name, version }).then((r) => r.interface).catch(undefinedOn404))
  const createBody = { ...body, public: visibility === 'public' }
  if (existing) {
    const update = {
      ...createBody, id: existing.id,
      entities: setNull(body.entities as Rec, existing.entities), actions: setNull(body.actions as Rec, existing.actions),
      events: setNull(body.events as Rec, existing.events), channels: setNull(body.channels as Rec, existing.channels),
      attributes: setNull(body.attributes as Rec, existing.attributes),
    }
    return (await c.updateInterface(update as never)).interface
  }
  return (await c.createInterface(createBody as never)).interface
}

/** DeployCommand._deployIntegration after the handle: find it, resolve its interfaces, create or update it. */
export async function cliDeployIntegration(c: Client, workspaceId: string, body: Body & { name: string; version: string; interfaces?: Record<string, { name: string; version: string } & Rec> }) {
  const { name, version } = body
  const existing = await findIntegration(c, name, version)
  if (existing && (existing as { workspaceId?: string }).workspaceId !== undefined && (existing as { workspaceId?: string }).workspaceId !== workspaceId) {
    throw new Error(`Public integration ${name} v${version} is already deployed in another workspace.`)
  }
  // prepareIntegrationDependencies: every interface by getPublicInterface.
  const interfaces: Rec = {}
  for (const [alias, dep] of Object.entries(body.interfaces ?? {})) interfaces[alias] = { ...dep, id: (await getPublicInterface(c, dep.name, dep.version)).id }
  const createBody: Rec = { ...body, interfaces, visibility: 'private' }
  if (existing) {
    const remote = existing as unknown as Rec & { channels: Rec; identifier: Rec }
    const update: Rec = {
      ...createBody, id: existing.id,
      actions: setNull(createBody.actions as Rec, remote.actions as Rec), events: setNull(createBody.events as Rec, remote.events as Rec),
      states: setNull(createBody.states as Rec, remote.states as Rec), entities: setNull(createBody.entities as Rec, remote.entities as Rec),
      user: { ...(createBody.user as Rec), tags: setNull((createBody.user as { tags?: Rec } | undefined)?.tags, (remote.user as { tags?: Rec } | undefined)?.tags) },
      channels: Object.fromEntries([...new Set([...Object.keys((createBody.channels ?? {}) as Rec), ...Object.keys(remote.channels)])].map((ch) => {
        const local = (createBody.channels as Record<string, Rec> | undefined)?.[ch]
        const r = remote.channels[ch] as { messages: Rec; message: { tags: Rec }; conversation: { tags: Rec } } | undefined
        if (local && r) return [ch, { ...local, messages: setNull(local.messages as Rec, r.messages), message: { ...(local.message as Rec), tags: setNull((local.message as { tags?: Rec } | undefined)?.tags, r.message.tags) }, conversation: { ...(local.conversation as Rec), tags: setNull((local.conversation as { tags?: Rec } | undefined)?.tags, r.conversation.tags) } }]
        return [ch, local ?? null]
      })),
      interfaces: setNull(interfaces, remote.interfaces as Rec), configurations: setNull(createBody.configurations as Rec, remote.configurations as Rec),
      attributes: setNull(createBody.attributes as Rec, remote.attributes as Rec),
      secrets: {},
    }
    if (remote.identifier.extractScript && !(body.identifier as Rec | undefined)?.extractScript) update.identifier = { ...remote.identifier, extractScript: null }
    return (await c.updateIntegration(update as never)).integration
  }
  await findIntegration(c, name, `<${version}`) // findPreviousIntegrationVersion
  return (await c.createIntegration({ ...createBody, secrets: {} } as never)).integration
}

/** DeployCommand._deployPlugin: its bundles, dependencies resolved like preparePluginDependencies. */
export async function cliDeployPlugin(c: Client, body: Body & { name: string; version: string }, deps: { integrations?: Record<string, { name: string; version: string }>; interfaces?: Record<string, { name: string; version: string }> }, code: { node: string; browser: string }) {
  const { name, version } = body
  const existing = (await c.getPluginByName({ name, version }).then((r) => r.plugin).catch(undefinedOn404))
    ?? (await c.getPublicPlugin({ name, version }).then((r) => r.plugin).catch(undefinedOn404))
  const integrations: Rec = {}
  for (const [alias, d] of Object.entries(deps.integrations ?? {})) integrations[alias] = { ...d, id: (await getIntegration(c, d.name, d.version)).id }
  const interfaces: Rec = {}
  for (const [alias, d] of Object.entries(deps.interfaces ?? {})) interfaces[alias] = { ...d, id: (await getPublicInterface(c, d.name, d.version)).id }
  const createBody = { ...body, dependencies: { integrations, interfaces }, visibility: 'private', code }
  if (existing) {
    const update = {
      ...createBody, id: existing.id,
      actions: setNull(body.actions as Rec, existing.actions), events: setNull(body.events as Rec, existing.events), states: setNull(body.states as Rec, existing.states),
      attributes: setNull(body.attributes as Rec, existing.attributes),
      dependencies: { integrations: setNull(integrations, existing.dependencies?.integrations), interfaces: setNull(interfaces, existing.dependencies?.interfaces) },
    }
    return (await c.updatePlugin(update as never)).plugin
  }
  return (await c.createPlugin(createBody as never)).plugin
}

export interface BotDeployDefinition {
  body: Body
  integrations?: Record<string, { name: string; version: string; enabled?: boolean; configuration?: Rec; configurationType?: string | null; disabledChannels?: string[] }>
  plugins?: Record<string, { name: string; version: string; configuration?: Rec; interfaces?: Record<string, { name: string; version: string; integrationAlias: string; integrationInterfaceAlias: string }>; integrations?: Record<string, { name: string; version: string; integrationAlias: string }> }>
}

/** DeployCommand._deployBot for an existing bot (--botId): getBot, resolve dependencies, updateBot, tables, integration urls. */
export async function cliDeployBot(c: Client, apiUrl: string, token: string, workspaceId: string, botId: string, def: BotDeployDefinition, code: string, calls: string[] = []) {
  const { bot } = await c.getBot({ id: botId })
  const integrations: Rec = {}
  for (const [alias, dep] of Object.entries(def.integrations ?? {})) {
    const { id } = await getIntegration(c, dep.name, dep.version)
    integrations[alias] = { enabled: dep.enabled, configurationType: dep.configurationType, configuration: dep.configuration ?? {}, disabledChannels: dep.disabledChannels, integrationId: id }
  }
  const plugins: Rec = {}
  for (const [alias, dep] of Object.entries(def.plugins ?? {})) {
    const plugin = (await c.getPluginByName({ name: dep.name, version: dep.version }).then((r) => r.plugin).catch(undefinedOn404))
      ?? (await c.getPublicPlugin({ name: dep.name, version: dep.version }).then((r) => r.plugin).catch(undefinedOn404))
    if (!plugin) throw new Error(`Plugin "${dep.name}@${dep.version}" not found`)
    const ifaces: Rec = {}
    for (const [k, d] of Object.entries(dep.interfaces ?? {})) ifaces[k] = { integrationId: (await getIntegration(c, d.name, d.version)).id, integrationAlias: d.integrationAlias, integrationInterfaceAlias: d.integrationInterfaceAlias }
    const integs: Rec = {}
    for (const [k, d] of Object.entries(dep.integrations ?? {})) integs[k] = { integrationId: (await getIntegration(c, d.name, d.version)).id, integrationAlias: d.integrationAlias }
    plugins[alias] = { ...dep, alias, id: plugin.id, interfaces: ifaces, integrations: integs }
  }
  const remote = bot as unknown as Rec
  const { bot: updated } = await c.updateBot({
    ...def.body, id: bot.id, code,
    integrations: setNull(integrations, remote.integrations as Rec), plugins: setNull(plugins, remote.plugins as Rec),
    states: setNull(def.body.states as Rec, remote.states as Rec), events: setNull(def.body.events as Rec, remote.events as Rec),
    actions: setNull(def.body.actions as Rec, remote.actions as Rec), recurringEvents: setNull(def.body.recurringEvents as Rec, remote.recurringEvents as Rec),
  } as never)
  const failed = Object.entries(updated.integrations).filter(([, i]) => i.status === 'registration_failed')
  // TablesPublisher.deployTables (as the bot), then displayIntegrationUrls: each of the bot's integrations by id.
  await traced(cliClient(apiUrl, token, workspaceId, updated.id), calls).listTables({}).catch(() => undefined)
  const shown: Rec = {}
  for (const [alias, i] of Object.entries(updated.integrations)) {
    shown[alias] = (await c.getIntegration({ id: i.id }).then((r) => r.integration).catch(undefinedOn404))
      ?? (await c.getPublicIntegrationById({ id: i.id }).then((r) => r.integration).catch(undefinedOn404))
    if (!shown[alias]) throw new Error(`Integration "${i.id}" not found`)
  }
  return { bot: updated, failed, shown }
}
