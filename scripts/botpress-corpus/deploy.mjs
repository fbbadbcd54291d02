// `deploy`: the Botpress CLI's own `bp deploy` of an interface, integrations, a plugin and bots against Parley
// (issue #26), through a recording proxy: each request the CLI makes is listed (method, path, status; the answer's
// body when it is not a success) in logs/deploy-<project>.json, the failures in the summary. Then each deployed bot
// that answers messages is asked one through @botpress/chat: Parley runs its bundle (hosted code), nobody serves it.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOTPRESS_DIR, CLI_BIN, LOG_DIR, WORK_DIR, adminClient, depsRequire, errText, runAsync, waitFor } from './lib.mjs'
import { startRecordingProxy } from './fakes.mjs'

// [project, CLI arguments, what the deployed bot answers to "hello" (bots that answer messages), a line its logs then hold]
const PROJECTS = [
  // telegram implements it; integrations find interfaces through the hub, hence public
  ['interfaces/typing-indicator', ['--visibility', 'public']],
  ['integrations/webhook', []],
  ['integrations/telegram', []],
  ['integrations/make', []],
  ['plugins/logger', []],
  ['bots/echo', ['--createNewBot'], (text) => text === 'Hi! You said: "hello"'],
  // its plugins/logger (bundled into the bot by the CLI) prints each hook it sees: the plugin runs
  ['bots/hello-world', ['--createNewBot'], (text) => text === 'Hello, World!', /^before_incoming_message/],
  // a bot with no integration and no handler
  ['packages/cli/templates/empty-bot', ['--createNewBot']],
]

export async function deploy(p) {
  const home = join(WORK_DIR, 'bp-home')
  mkdirSync(home, { recursive: true })
  const results = []
  // The CLI refuses to deploy an integration from a workspace without a handle (under -y it does not prompt for
  // one): the handle is set first, as the CLI's prompt would (checkHandleAvailability, then updateWorkspace).
  const admin = adminClient(p)
  const handle = await admin.checkHandleAvailability({ handle: 'corpus' }).then((r) => `available=${r.available}`, errText)
  const update = await admin.updateWorkspace({ id: p.workspaceId, handle: 'corpus' }).then(() => 'ok', errText)
  const got = await admin.getWorkspace({ id: p.workspaceId })
  const workspace = got.workspace ?? got
  results.push({ name: 'workspace handle (checkHandleAvailability, updateWorkspace)', ok: workspace.handle === 'corpus', detail: `checkHandleAvailability: ${handle}; updateWorkspace: ${update}; getWorkspace.handle = ${workspace.handle}` })
  for (const [project, extra, answers, logged] of PROJECTS) {
    const before = new Set((await admin.listBots({})).bots.map((b) => b.id))
    const proxy = await startRecordingProxy(p.apiUrl)
    const name = `deploy-${project.replace(/\//g, '-')}`
    const r = await runAsync(name, process.execPath, [CLI_BIN, 'deploy', '-y', '--noBuild', '--verbose', '--botpressHome', home,
      '--apiUrl', proxy.url, '--workspaceId', p.workspaceId, '--token', p.token, ...extra], { cwd: join(BOTPRESS_DIR, project) })
    proxy.close()
    writeFileSync(join(LOG_DIR, `${name}.json`), JSON.stringify(proxy.exchanges, null, 2))
    const failed = proxy.exchanges.filter((x) => x.status >= 400)
    const cliError = r.output.split('\n').filter((l) => /✗|error/i.test(l)).slice(-2).join(' | ').slice(0, 300)
    results.push({
      name: `bp deploy ${project}`,
      ok: r.status === 0,
      detail: r.status === 0 ? `${proxy.exchanges.length} requests, ${failed.length} answered 4xx/5xx (the CLI's lookups of versions that do not exist yet answer 404)` : `exit ${r.status}; ${cliError}`,
    })
    // The refused requests of a failed deploy are its findings; a deploy that succeeded lists them in its .json log only.
    if (r.status !== 0) {
      for (const x of failed) results.push({ name: `  ${x.method} ${x.path.split('?')[0]}`, ok: false, detail: `${x.status} ${x.body ?? ''}`.replace(/\s+/g, ' ').slice(0, 300) })
    }
    const created = (await admin.listBots({})).bots.find((b) => !before.has(b.id))
    if (r.status === 0 && answers && created) results.push(await askDeployed(p, admin, project, created.id, answers, logged))
  }
  return results
}

/**
 * Asks a deployed bot "hello" through @botpress/chat on its chat integration. A bot whose definition has no chat
 * integration (bots/hello-world: telegram and webhook) has chat disabled by the deploy: it is enabled first, one
 * Admin API call, as a Botpress user would add the chat integration.
 */
async function askDeployed(p, admin, project, botId, answers, logged) {
  const name = `  ${project} answers @botpress/chat (hosted code)`
  try {
    let { bot } = await admin.getBot({ id: botId })
    const enabled = bot.integrations.chat?.enabled === true
    if (!enabled) bot = (await admin.updateBot({ id: botId, integrations: { chat: { enabled: true } } })).bot
    const chat = depsRequire('@botpress/chat')
    const client = await chat.Client.connect({ apiUrl: `${p.apiUrl}/${bot.integrations.chat.webhookId}` })
    const { conversation } = await client.createConversation({})
    await client.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hello' } })
    const reply = await waitFor(`${project}'s answer`, async () => {
      const { messages } = await client.listMessages({ conversationId: conversation.id })
      return messages.find((m) => m.userId !== client.user.id)
    }, 60_000, 250)
    const text = reply.payload.text ?? JSON.stringify(reply.payload)
    const lines = logged ? await waitFor(`${logged} in ${project}'s logs`, async () => {
      const { logs } = await admin.getBotLogs({ id: botId, timeStart: new Date(Date.now() - 600_000).toISOString(), timeEnd: new Date().toISOString() })
      return logs.some((l) => logged.test(l.message)) && logs
    }, 10_000, 250).catch(() => undefined) : []
    const seen = logged ? (lines ? `; its logs hold ${logged}` : `; its logs lack ${logged}`) : ''
    return { name, ok: answers(text) && lines !== undefined, detail: `${enabled ? '' : 'chat enabled with updateBot; '}answered ${JSON.stringify(text).slice(0, 200)}${seen}` }
  } catch (err) {
    const logs = await admin.getBotLogs({ id: botId, timeStart: new Date(Date.now() - 600_000).toISOString(), timeEnd: new Date().toISOString() }).then((r) => r.logs.slice(-5).map((l) => l.message).join(' | '), errText)
    return { name, ok: false, detail: `${errText(err)}; last logs: ${logs}`.slice(0, 600) }
  }
}
