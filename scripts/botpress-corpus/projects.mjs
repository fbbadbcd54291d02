// Botpress projects on a Parley: a bot created from its definition and served with `bp serve`, an integration
// registered from its definition and served with `node --import integration-secrets`.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { BOTPRESS_DIR, CLI_BIN, HERE, PARLEY_DIR, adminClient, botBody, errText, freePort, integrationBody, log, start, waitFor } from './lib.mjs'

const listening = (url) => fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then(() => true)

/** createBot with what `bp deploy` would send for the bot's definition, an API key, `bp serve`, then its url. */
export async function serveBot(p, project, name) {
  const admin = adminClient(p)
  const { body } = await botBody(join(BOTPRESS_DIR, project))
  let bot
  try {
    ({ bot } = await admin.createBot({ name, ...body }))
  } catch (e) {
    log(`createBot with ${project}'s definition refused (${errText(e)}); creating it with its name only`)
    ;({ bot } = await admin.createBot({ name }))
  }
  const { value: token } = await admin.createBotApiKey({ botId: bot.id, note: `corpus ${name}` })
  const port = await freePort()
  const proc = start(name, process.execPath, [CLI_BIN, 'serve', '--port', String(port)], {
    cwd: join(BOTPRESS_DIR, project),
    env: { BP_API_URL: p.apiUrl, BP_TOKEN: token, BP_BOT_ID: bot.id },
  })
  const url = `http://127.0.0.1:${port}/`
  await waitFor(`${project} to listen (logs/${name}.log)`, () => {
    if (proc.child.exitCode !== null) throw new Error(proc.output().slice(-1500))
    return listening(url)
  }, 30_000)
  await admin.updateBot({ id: bot.id, url })
  return { bot: (await admin.getBot({ id: bot.id })).bot, token, url, proc }
}

/**
 * createIntegration with what `bp deploy` sends (without code, icon, readme), an integration API key, the
 * integration served from its .botpress/dist with Parley's secrets preload (and `preload` when given).
 */
export async function serveIntegration(p, project, { name = project.split('/').pop(), preload, env = {} } = {}) {
  const admin = adminClient(p)
  const { body } = await integrationBody(join(BOTPRESS_DIR, project))
  // One Parley serves several parts: an integration registered by an earlier part is reused (its url moves here).
  const integration = await admin.createIntegration(body).then((r) => r.integration, async (e) => {
    if (!/already exists/i.test(errText(e))) throw e
    return (await admin.getIntegrationByName({ name: body.name, version: body.version })).integration
  })
  const { value: token } = await admin.createIntegrationApiKey({ integrationId: integration.id })
  const port = await freePort()
  const bundle = join(BOTPRESS_DIR, project, '.botpress/dist/index.cjs')
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run the build first`)
  const starter = `require(${JSON.stringify(bundle)}).default.start(${port})`
  const args = ['--import', join(PARLEY_DIR, 'integration-secrets.mjs'), ...(preload ? ['--import', join(HERE, preload)] : []), '-e', starter]
  const proc = start(`integration-${name}`, process.execPath, args, { cwd: join(BOTPRESS_DIR, project), env: { BP_API_URL: p.apiUrl, BP_TOKEN: token, ...env } })
  const url = `http://127.0.0.1:${port}/`
  await waitFor(`${project} to listen (logs/integration-${name}.log)`, () => {
    if (proc.child.exitCode !== null) throw new Error(proc.output().slice(-1500))
    return listening(url)
  }, 30_000)
  await admin.updateIntegration({ id: integration.id, url })
  return { integration, url, proc }
}

/** updateBot installing `integration` as `alias`; answers getBot's view of the installation once registered. */
export async function install(p, botId, alias, integrationId, configuration) {
  const admin = adminClient(p)
  await admin.updateBot({ id: botId, integrations: { [alias]: { integrationId, enabled: true, configuration } } })
  return waitFor(`installation ${alias} to leave "registering"`, async () => {
    const { bot } = await admin.getBot({ id: botId })
    const inst = bot.integrations[alias]
    return inst && !/^(registering|pending|unregistered)$/.test(inst.status ?? '') && inst
  }, 15_000, 200).catch(async () => (await admin.getBot({ id: botId })).bot.integrations[alias])
}

/** Posts to an installation's webhook url (a sub-path and query allowed). */
export async function postWebhook(webhookUrl, body, { subPath = '', method = 'POST', headers = {} } = {}) {
  const r = await fetch(webhookUrl.replace(/\/+$/, '') + subPath, {
    method, headers: { 'content-type': 'application/json', ...headers }, body: method === 'GET' ? undefined : JSON.stringify(body),
  })
  return { status: r.status, text: await r.text() }
}
