// `hello-world` (with plugins/logger, integrations/telegram and integrations/webhook installed as `webhook`) and
// `bugbuster` (bot states, its lintAll workflow started from an event), each served with `bp serve`.
import { adminClient, botClient, expect, sleep, step, waitFor } from './lib.mjs'
import { startFakeTelegram, telegramUpdate } from './fakes.mjs'
import { install, postWebhook, serveBot, serveIntegration } from './projects.mjs'

const waitOutput = (proc, text, ms = 15_000) => waitFor(`"${text}" in logs/${proc.name}.log`, () => proc.output().includes(text), ms)

export async function helloWorld(p) {
  const results = []
  const telegram = await startFakeTelegram()
  const bot = await serveBot(p, 'bots/hello-world', 'corpus-hello-world')
  const client = botClient(p, bot.bot.id, bot.token)
  let tg, wh
  await step(results, 'install integrations/telegram as telegram', async () => {
    const t = await serveIntegration(p, 'integrations/telegram', { name: 'telegram-hw', preload: 'telegram-preload.mjs', env: { TELEGRAM_FAKE_URL: telegram.url } })
    tg = await install(p, bot.bot.id, 'telegram', t.integration.id, { botToken: '123456789:corpus-fake-telegram-token' })
    return `status ${tg?.status}`
  })
  await step(results, 'install integrations/webhook as webhook (replaces the built-in one)', async () => {
    const w = await serveIntegration(p, 'integrations/webhook')
    wh = await install(p, bot.bot.id, 'webhook', w.integration.id, {})
    expect(wh?.id === w.integration.id, `getBot's webhook installation is ${JSON.stringify({ id: wh?.id, webhookUrl: wh?.webhookUrl })}, not the SDK integration ${w.integration.id}`)
  })
  await step(results, 'webhook: POST /some/path?x=1 reaches the bot as webhook:event {body, method, path, query}', async () => {
    expect(wh?.webhookUrl, 'no webhook url')
    const r = await postWebhook(wh.webhookUrl, { corpus: 1 }, { subPath: '/some/path?x=1' })
    expect(r.status < 300, `webhook answered ${r.status} ${r.text.slice(0, 200)}`)
    await waitOutput(bot.proc, 'Received webhook request: POST')
    const line = bot.proc.output().split('\n').find((l) => l.includes('Received webhook request:'))
    expect(line.includes('x=1') && line.includes('"corpus":1'), line.trim().slice(0, 200))
  })
  await step(results, 'telegram: message in, "Hello, World!" out', async () => {
    expect(tg?.webhookUrl, 'not installed')
    const r = await postWebhook(tg.webhookUrl, telegramUpdate(7, 777, 'hi'))
    expect(r.status < 300, `webhook answered ${r.status}`)
    const sent = await waitFor('sendMessage', () => telegram.calls.find((c) => c.method === 'sendMessage' && String(c.body.chat_id) === '777'), 20_000)
    expect(sent.body.text?.includes('Hello, World!'), JSON.stringify(sent.body.text))
  })
  await step(results, 'plugins/logger hooks run (before_incoming_message, after_outgoing_message)', async () => {
    await waitOutput(bot.proc, 'before_incoming_message', 5000)
    await waitOutput(bot.proc, 'after_outgoing_message', 5000)
  })
  await step(results, 'callAction sayHello (the bot\'s own action)', async () => {
    const { output } = await client.callAction({ type: 'sayHello', input: { name: 'Parley' } })
    expect(output?.message === 'Hello, Parley!', JSON.stringify(output))
  })
  await step(results, 'register handler ran ("Registering Hello World bot!")', async () => { await waitOutput(bot.proc, 'Registering Hello World bot!', 5000) })
  telegram.close()
  return results
}

export async function bugbuster(p) {
  const results = []
  const admin = adminClient(p)
  const bot = await serveBot(p, 'bots/bugbuster', 'corpus-bugbuster')
  const client = botClient(p, bot.bot.id, bot.token)
  await step(results, 'createBot takes the definition (states, events, recurringEvents)', async () => {
    const { bot: got } = await admin.getBot({ id: bot.bot.id })
    const names = Object.keys(got.states ?? {})
    expect(names.includes('watchedTeams'), `states ${JSON.stringify(names)}`)
    return `states ${names.join(',')}; recurringEvents ${Object.keys(got.recurringEvents ?? {}).join(',') || 'none'}`
  })
  await step(results, 'bot state: setState/getState watchedTeams', async () => {
    await client.setState({ type: 'bot', id: bot.bot.id, name: 'watchedTeams', payload: { teamKeys: ['CORPUS'] } })
    const { state } = await client.getState({ type: 'bot', id: bot.bot.id, name: 'watchedTeams' })
    expect(state.payload.teamKeys?.[0] === 'CORPUS', JSON.stringify(state.payload))
  })
  let workflow
  await step(results, 'event timeToLintAll → getOrCreateWorkflow(lintAll, pending)', async () => {
    await client.createEvent({ type: 'timeToLintAll', payload: {} })
    await waitOutput(bot.proc, "'timeToLintAll' event received.", 20_000)
    workflow = await waitFor('a lintAll workflow', async () => (await client.listWorkflows({ name: 'lintAll' })).workflows[0], 10_000)
    return `workflow ${workflow.id} ${workflow.status}`
  })
  await step(results, 'lintAll starts (workflow_update reaches the bot; status leaves pending)', async () => {
    expect(workflow, 'no workflow')
    await sleep(Number(process.env.CORPUS_WORKFLOW_WAIT_MS ?? 8000))
    const { workflow: now } = await client.getWorkflow({ id: workflow.id })
    const started = /lintAll|workflow/i.test(bot.proc.output().split("'timeToLintAll' event received.")[1] ?? '')
    expect(now.status !== 'pending', `status still ${now.status} after ${(Number(process.env.CORPUS_WORKFLOW_WAIT_MS ?? 8000)) / 1000} s; bot log mentions the workflow after the event: ${started}`)
    return `status ${now.status}`
  })
  await step(results, 'workflow state lastLintedId (type workflow, stripped by the CLI)', async () => {
    expect(workflow, 'no workflow')
    const { state } = await client.getOrSetState({ type: 'workflow', id: workflow.id, name: 'lastLintedId', payload: {} })
    return JSON.stringify(state.payload)
  })
  return results
}
