/**
 * `bp login` and `bp deploy` of the official Botpress CLI against Parley (issue #26 item 1), reproduced call by
 * call through the unchanged @botpress/client@1.45.0 (test/helpers/bp-deploy.ts follows packages/cli): the
 * workspace handle flow, an interface, an integration implementing it (icon and readme of Botpress's sizes),
 * a plugin, and a bot adding chat@0.7.6 and the plugin with a CommonJS bundle built here with esbuild as the CLI
 * builds it. Also: the size limits at their boundary and the deploy's validation errors in Botpress's types.
 */
import { isApiError, type Client } from '@botpress/client'
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_ICON_README_CHARS } from '../../src/domain/integration-service.js'
import { startParley, type Harness } from '../helpers/harness.js'
import {
  cliClient, cliDeployBot, cliDeployIntegration, cliDeployInterface, cliDeployPlugin, cliLogin, cliManageHandle, traced,
} from '../helpers/bp-deploy.js'

let seq = 0
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`

async function apiError(promise: Promise<unknown>): Promise<{ type: string; code: number; message: string }> {
  try {
    await promise
  } catch (err) {
    if (isApiError(err)) return err as never
    throw err
  }
  throw new Error('expected an API error')
}

const schema = (properties: Record<string, unknown> = {}) => ({ type: 'object', properties, additionalProperties: false })
/** base64 text of exactly n characters (what the CLI sends for icon.svg / readme.md). */
const base64Of = (n: number) => 'A'.repeat(n)

/** interfaces/typing-indicator as prepareCreateInterfaceBody sends it. */
const typingInterface = (version = '0.0.1') => ({
  name: 'typing-indicator', version, title: 'Typing Indicator', description: 'Start and stop typing',
  entities: {}, events: {}, channels: {},
  actions: {
    startTypingIndicator: { input: { schema: schema({ conversationId: { type: 'string' } }) }, output: { schema: schema() } },
    stopTypingIndicator: { input: { schema: schema({ conversationId: { type: 'string' } }) }, output: { schema: schema() } },
  },
})

/** An integration implementing typing-indicator, as prepareCreateIntegrationBody sends it (icon of cerebras's size). */
const integrationBody = (name: string, version: string, extraAction = true) => ({
  name, version, title: 'Messenger', description: 'A messaging channel',
  icon: base64Of(294_344), readme: base64Of(34_024),
  configuration: { schema: schema({ token: { type: 'string' } }), identifier: {} },
  channels: { channel: { messages: { text: { schema: schema({ text: { type: 'string' } }) } }, message: { tags: { id: {} } }, conversation: { tags: { id: {} } } } },
  actions: {
    startTypingIndicator: { input: { schema: schema() }, output: { schema: schema() } },
    stopTypingIndicator: { input: { schema: schema() }, output: { schema: schema() } },
    ...(extraAction && { ping: { input: { schema: schema() }, output: { schema: schema() } } }),
  },
  events: {}, states: {}, entities: {}, user: { tags: { id: {} } },
  identifier: {}, configurations: {},
  interfaces: {
    'typing-indicator': {
      name: 'typing-indicator', version: '0.0.1', entities: {}, events: {}, channels: {},
      actions: { startTypingIndicator: { name: 'startTypingIndicator' }, stopTypingIndicator: { name: 'stopTypingIndicator' } },
    },
  },
  sdkVersion: '5.4.3',
})

describe('bp deploy (the Botpress CLI\'s calls) against Parley', () => {
  let h: Harness
  let apiUrl: string
  let token: string

  beforeAll(async () => {
    h = await startParley({ listen: true })
    apiUrl = h.baseUrl
    token = h.credentials.token
  })
  afterAll(async () => h?.close())

  /** A fresh workspace of the owner (no handle yet), with the CLI's client on it. */
  async function freshWorkspace(): Promise<{ id: string; c: Client; calls: string[] }> {
    const { id } = await cliClient(apiUrl, token).createWorkspace({ name: unique('ws') })
    const calls: string[] = []
    return { id, c: traced(cliClient(apiUrl, token, id), calls), calls }
  }

  it('bp login with a personal access token: listWorkspaces (no workspace yet), then listBots in the chosen one', async () => {
    const calls: string[] = []
    const workspaceId = await cliLogin(apiUrl, token, calls)
    expect(calls).toEqual(['listWorkspaces', 'listBots'])
    expect(workspaceId).toBe(h.credentials.workspaceId)
  })

  it('the handle flow: checkHandleAvailability, updateWorkspace({ handle }), then getWorkspace and listWorkspaces({ handle }) show it', async () => {
    const ws = await freshWorkspace()
    const handle = unique('acme')
    expect(await ws.c.checkHandleAvailability({ handle })).toEqual({ available: true, suggestions: [] })
    ws.calls.length = 0
    const name = await cliManageHandle(ws.c, ws.id, 'messenger', handle)
    expect(name).toBe(`${handle}/messenger`)
    expect(ws.calls).toEqual(['getWorkspace', 'checkHandleAvailability', 'updateWorkspace'])
    expect((await ws.c.getWorkspace({ id: ws.id })).handle).toBe(handle)
    expect((await ws.c.listWorkspaces({})).workspaces.find((w) => w.id === ws.id)?.handle).toBe(handle)
    expect((await ws.c.listWorkspaces({ handle })).workspaces.map((w) => w.id)).toEqual([ws.id])
    // The next deploy of an integration without a handle is offered `handle/name` (getWorkspace only).
    expect(await cliManageHandle(ws.c, ws.id, 'other')).toBe(`${handle}/other`)

    // Taken: not available (with free suggestions), and another workspace cannot claim it.
    const other = await freshWorkspace()
    const taken = await other.c.checkHandleAvailability({ handle })
    expect(taken.available).toBe(false)
    expect(taken.suggestions.length).toBeGreaterThan(0)
    for (const s of taken.suggestions) expect((await other.c.checkHandleAvailability({ handle: s })).available).toBe(true)
    expect(await apiError(other.c.updateWorkspace({ id: other.id, handle }))).toMatchObject({ type: 'AlreadyExists', code: 409 })
    // Botpress's rule: ^[0-9a-z][a-z0-9-_]+[0-9a-z]$, at most 64 characters.
    for (const bad of ['ab', 'Acme', '-acme', 'acme-', 'ac me', 'a'.repeat(65)]) {
      expect((await other.c.checkHandleAvailability({ handle: bad })).available).toBe(false)
      expect(await apiError(other.c.updateWorkspace({ id: other.id, handle: bad }))).toMatchObject({ type: 'InvalidPayload', code: 400 })
    }
    expect((await other.c.checkHandleAvailability({ handle: 'a_1' })).available).toBe(true)
    // A handle is claimed once.
    expect(await apiError(ws.c.updateWorkspace({ id: ws.id, handle: unique('again') }))).toMatchObject({ type: 'InvalidPayload', code: 400 })
    expect((await ws.c.updateWorkspace({ id: ws.id, handle })).handle).toBe(handle)
  })

  it('an interface, then an integration implementing it: created, found by name and range, then updated (a removed action is null)', async () => {
    const ws = await freshWorkspace()
    const iface = await cliDeployInterface(ws.c, typingInterface(), 'public')
    expect(iface).toMatchObject({ name: 'typing-indicator', version: '0.0.1', public: true })
    expect(ws.calls).toEqual(['getInterfaceByName', 'getPublicInterface', 'createInterface'])
    expect((await ws.c.getInterface({ id: iface.id })).interface.actions).toHaveProperty('startTypingIndicator')
    expect((await ws.c.getPublicInterfaceById({ id: iface.id })).interface.id).toBe(iface.id)
    // Deployed again: found in the workspace, updated.
    ws.calls.length = 0
    const again = await cliDeployInterface(ws.c, { ...typingInterface(), title: 'Typing' }, 'public')
    expect(again).toMatchObject({ id: iface.id, title: 'Typing' })
    expect(ws.calls).toEqual(['getInterfaceByName', 'updateInterface'])

    const name = await cliManageHandle(ws.c, ws.id, 'messenger', unique('msgr'))
    ws.calls.length = 0
    const created = await cliDeployIntegration(ws.c, ws.id, integrationBody(name, '1.0.0'))
    expect(ws.calls).toEqual(['getIntegrationByName', 'getPublicIntegration', 'getPublicInterface', 'getIntegrationByName', 'getPublicIntegration', 'createIntegration'])
    expect(created).toMatchObject({ name, version: '1.0.0', interfaces: { 'typing-indicator': { id: iface.id } } })
    expect((await ws.c.getIntegrationByName({ name, version: '<1.0.1' })).integration.id).toBe(created.id)
    expect(await apiError(ws.c.getIntegrationByName({ name, version: '<1.0.0' }))).toMatchObject({ type: 'ResourceNotFound', code: 404 })
    expect((await ws.c.listIntegrations({ name, version: '1.0.0' })).integrations.map((i) => i.id)).toEqual([created.id])
    // A bot's bp_modules name it without the handle (`messenger`): the workspace's `handle/messenger` answers.
    expect((await ws.c.getIntegrationByName({ name: 'messenger', version: '1.0.0' })).integration.id).toBe(created.id)

    ws.calls.length = 0
    const updated = await cliDeployIntegration(ws.c, ws.id, integrationBody(name, '1.0.0', false))
    expect(ws.calls).toEqual(['getIntegrationByName', 'getPublicInterface', 'updateIntegration'])
    expect(Object.keys(updated.actions).sort()).toEqual(['startTypingIndicator', 'stopTypingIndicator'])
    const got = (await ws.c.getIntegration({ id: created.id })).integration
    expect(got.channels.channel).toMatchObject({ message: { tags: { id: {} } }, conversation: { tags: { id: {} } } })
  })

  it('a bot adding chat@0.7.6 and a plugin deploys with its CommonJS bundle; a Parley module deploys after it as before', async () => {
    const ws = await freshWorkspace()
    const logger = await cliDeployPlugin(ws.c, { name: 'logger', version: '0.0.1', configuration: { schema: schema() }, user: { tags: {} }, conversation: { tags: {} } },
      {}, { node: 'module.exports = {}', browser: 'export default {}' })
    expect(logger).toMatchObject({ name: 'logger', version: '0.0.1', visibility: 'private' })
    expect(ws.calls).toEqual(['getPluginByName', 'getPublicPlugin', 'createPlugin'])

    const { bot } = await ws.c.createBot({})
    // The bundle, as `bp build` makes it: esbuild, CommonJS, for node, of a src/index.ts that exports the bot.
    const bundled = await build({
      stdin: { contents: "import * as sdk from '@botpress/sdk'\nconst bot = new sdk.Bot({ actions: {}, plugins: {} })\nexport default bot\n", resolveDir: fileURLToPath(new URL('.', import.meta.url)) },
      bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'silent',
    })
    const code = bundled.outputFiles[0]!.text
    ws.calls.length = 0
    const calls: string[] = []
    const deployed = await cliDeployBot(ws.c, apiUrl, token, ws.id, bot.id, {
      body: { user: { tags: {} }, conversation: { tags: {} }, message: { tags: {} }, states: {}, events: {}, actions: {}, recurringEvents: {} },
      integrations: { chat: { name: 'chat', version: '0.7.6', enabled: true, configuration: {} } },
      plugins: { logger: { name: 'logger', version: '0.0.1', configuration: {} } },
    }, code, calls)
    expect(ws.calls).toEqual(['getBot', 'getIntegrationByName', 'getPublicIntegration', 'getPluginByName', 'updateBot', 'getIntegration', 'getPublicIntegrationById'])
    expect(calls).toEqual(['listTables'])
    expect(deployed.failed).toEqual([])
    expect(deployed.bot.integrations.chat).toMatchObject({ name: 'chat', version: '0.7.6', enabled: true })
    expect(deployed.shown.chat).toMatchObject({ name: 'chat', version: '0.7.6' })
    expect(deployed.bot.plugins.logger).toMatchObject({ id: logger.id, name: 'logger', version: '0.0.1', enabled: true })
    expect((await ws.c.getBot({ id: bot.id })).bot.plugins).toHaveProperty('logger')
    // The bundle is kept for hosted code; the sandbox runs nothing for this bot.
    expect((await h.store.packages.getBundle('bot', bot.id))?.code).toBe(code)
    expect((await h.store.getBot(bot.id))?.code).toBeNull()

    // Deploying again (the bot has chat and logger now) sends the same; a Parley module then replaces the bundle.
    await cliDeployBot(ws.c, apiUrl, token, ws.id, bot.id, { body: {}, integrations: { chat: { name: 'chat', version: '0.7.6' } } }, code)
    expect((await ws.c.getBot({ id: bot.id })).bot.plugins).toEqual({})
    const module = 'export const hooks = {}'
    await ws.c.updateBot({ id: bot.id, code: module })
    expect((await h.store.getBot(bot.id))?.code).toBe(module)
    expect(await h.store.packages.getBundle('bot', bot.id)).toBeUndefined()
    // Code that is neither a module that loads nor a CommonJS bundle is refused as before, the module staying live:
    // also a Parley module that calls require() or mentions module.exports.
    for (const broken of ['export const = 1', "const fs = require('fs')\nexport const hooks = {}", 'module.exports = {}\nexport const hooks = {}\nnope()']) {
      expect(await apiError(ws.c.updateBot({ id: bot.id, code: broken }))).toMatchObject({ type: 'InvalidPayload', code: 400 })
    }
    expect((await h.store.getBot(bot.id))?.code).toBe(module)
  })

  it('icon and readme up to MAX_ICON_README_CHARS each are taken, one more character is refused (400 naming the part)', async () => {
    const ws = await freshWorkspace()
    const base = { version: '1.0.0', title: 't' }
    await ws.c.createIntegration({ name: unique('edge'), ...base, icon: base64Of(MAX_ICON_README_CHARS), readme: base64Of(MAX_ICON_README_CHARS) })
    for (const part of ['icon', 'readme']) {
      const err = await apiError(ws.c.createIntegration({ name: unique('over'), ...base, [part]: base64Of(MAX_ICON_README_CHARS + 1) }))
      expect(err).toMatchObject({ type: 'InvalidPayload', code: 400 })
      expect(err.message).toContain(part)
      expect(await apiError(ws.c.createInterface({ name: unique('over'), ...base, [part]: base64Of(MAX_ICON_README_CHARS + 1) } as never))).toMatchObject({ type: 'InvalidPayload', code: 400 })
    }
  })

  it('the deploy\'s validation errors come in Botpress\'s error types', async () => {
    const ws = await freshWorkspace()
    const { bot } = await ws.c.createBot({})
    expect(await apiError(ws.c.getPublicIntegration({ name: 'chat', version: '9.9.9' }))).toMatchObject({ type: 'ResourceNotFound', code: 404 })
    expect(await apiError(ws.c.getPublicPlugin({ name: 'logger', version: '0.0.1' }))).toMatchObject({ type: 'ResourceNotFound', code: 404 })
    expect(await apiError(ws.c.updateBot({ id: bot.id, plugins: { logger: { id: 'no-such-plugin' } } }))).toMatchObject({ type: 'ReferenceNotFound', code: 400 })
    expect(await apiError(ws.c.createIntegration({ name: unique('i'), version: '1.0.0', interfaces: { x: { id: 'no-such-interface', entities: {}, actions: {}, events: {}, channels: {} } } }))).toMatchObject({ type: 'ReferenceNotFound', code: 400 })
    expect(await apiError(ws.c.createIntegration({ name: `someone/${unique('i')}`, version: '1.0.0' }))).toMatchObject({ type: 'InvalidPayload', code: 400 })
    expect(await apiError(ws.c.createPlugin({ name: 'p', version: 'one' } as never))).toMatchObject({ type: 'InvalidPayload', code: 400 })
    const plugin = await ws.c.createPlugin({ name: unique('p'), version: '1.0.0' } as never)
    expect(await apiError(ws.c.createPlugin({ name: plugin.plugin.name, version: '1.0.0' } as never))).toMatchObject({ type: 'AlreadyExists', code: 409 })
    // Another workspace's private definitions are not found, by id or by the hub.
    const other = await freshWorkspace()
    expect(await apiError(other.c.getPlugin({ id: plugin.plugin.id }))).toMatchObject({ type: 'ResourceNotFound', code: 404 })
    expect(await apiError(other.c.getPublicPluginById({ id: plugin.plugin.id }))).toMatchObject({ type: 'ResourceNotFound', code: 404 })
  })
})
