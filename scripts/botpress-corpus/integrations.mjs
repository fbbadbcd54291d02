// `integrations`: Botpress's Telegram, Zapier and Make integrations and the CLI's webhook-message template, each
// registered from its definition, served as a child process and installed on a bot served from bots/echo; their
// outside services are local fakes (fakes.mjs; Telegram's api.telegram.org through telegram-preload.mjs).
import { botClient, expect, sleep, step, waitFor } from './lib.mjs'
import { startCapture, startFakeTelegram, telegramUpdate } from './fakes.mjs'
import { install, postWebhook, serveBot, serveIntegration } from './projects.mjs'

const statusOf = (inst) => `status ${inst?.status ?? '?'}${inst?.statusReason ? ` (${inst.statusReason})` : ''}`

export async function integrations(p) {
  const results = []
  const capture = await startCapture()
  const telegram = await startFakeTelegram()
  const bot = await serveBot(p, 'bots/echo', 'corpus-channels')
  const client = botClient(p, bot.bot.id, bot.token)

  // Telegram
  await step(results, 'telegram: register (setWebhook at the fake Bot API)', async () => {
    const tg = await serveIntegration(p, 'integrations/telegram', { preload: 'telegram-preload.mjs', env: { TELEGRAM_FAKE_URL: telegram.url } })
    const inst = await install(p, bot.bot.id, 'telegram', tg.integration.id, { botToken: '123456789:corpus-fake-telegram-token' })
    results.telegram = inst
    await waitFor('setWebhook', () => telegram.calls.find((c) => c.method === 'setWebhook'), 10_000)
    const hook = telegram.calls.find((c) => c.method === 'setWebhook')
    expect(hook.body.url === inst.webhookUrl, `setWebhook url ${hook.body.url} is not ${inst.webhookUrl}`)
    return statusOf(inst)
  })
  await step(results, 'telegram: update in, bot answer out (sendMessage)', async () => {
    expect(results.telegram, 'not installed')
    const r = await postWebhook(results.telegram.webhookUrl, telegramUpdate(1, 4242, 'text'))
    expect(r.status < 300, `webhook answered ${r.status} ${r.text.slice(0, 200)}`)
    const sent = await waitFor('sendMessage', () => telegram.calls.find((c) => c.method === 'sendMessage' && String(c.body.chat_id) === '4242'), 20_000)
    expect(sent.body.text?.includes('Hello, world!'), `sendMessage text ${JSON.stringify(sent.body.text)}`)
  })
  await step(results, 'telegram: a redelivered update is answered once', async () => {
    expect(results.telegram, 'not installed')
    await postWebhook(results.telegram.webhookUrl, telegramUpdate(1, 4242, 'text'))
    await sleep(4000)
    const n = telegram.calls.filter((c) => c.method === 'sendMessage' && String(c.body.chat_id) === '4242').length
    expect(n === 1, `${n} answers`)
  })

  // The CLI's webhook-message template (its register throws 'Invalid configuration' as written)
  await step(results, 'webhook-message: install (register throws: registration_failed expected)', async () => {
    const wm = await serveIntegration(p, 'packages/cli/templates/webhook-message', { name: 'webhook-message' })
    const inst = await install(p, bot.bot.id, 'webhook-message', wm.integration.id, { webhookUrl: `${capture.url}/webhook-message` })
    results.wm = inst
    expect(inst?.status === 'registration_failed', `${statusOf(inst)}`)
    return statusOf(inst)
  })
  await step(results, 'webhook-message: message in, bot answer posted to webhookUrl', async () => {
    expect(results.wm?.webhookUrl, 'not installed')
    const r = await postWebhook(results.wm.webhookUrl, { userId: 'corpus-user', conversationId: 'corpus-conv', text: 'text' })
    expect(r.status < 300, `webhook answered ${r.status} ${r.text.slice(0, 200)}`)
    const got = await waitFor('a POST to webhookUrl', () => capture.requests.find((x) => x.path === '/webhook-message'), 20_000)
    expect(got.body.conversationId === 'corpus-conv' && got.body.text === 'Hello, world!', JSON.stringify(got.body))
  })

  // Zapier
  await step(results, 'zapier: subscribe a REST hook (demo trigger sent to it)', async () => {
    const z = await serveIntegration(p, 'integrations/zapier')
    const inst = await install(p, bot.bot.id, 'zapier', z.integration.id, {})
    results.zapier = inst
    const r = await postWebhook(inst.webhookUrl, { action: 'subscribe:triggers', url: `${capture.url}/zap` })
    expect(r.status < 300, `webhook answered ${r.status} ${r.text.slice(0, 200)}`)
    await waitFor('the demo trigger', () => capture.requests.find((x) => x.path === '/zap'), 15_000)
    return statusOf(inst)
  })
  await step(results, 'zapier: callAction zapier:trigger reaches the hook', async () => {
    expect(results.zapier, 'not installed')
    await client.callAction({ type: 'zapier:trigger', input: { data: '{"n":1}', correlationId: 'c1' } })
    const got = await waitFor('the trigger', () => capture.requests.find((x) => x.path === '/zap' && x.body.correlationId === 'c1'), 15_000)
    expect(got.body.botId === bot.bot.id && got.body.data === '{"n":1}', JSON.stringify(got.body))
  })
  await step(results, 'zapier: a Zap event reaches the bot as zapier:event', async () => {
    expect(results.zapier, 'not installed')
    const r = await postWebhook(results.zapier.webhookUrl, { data: '{"from":"zap"}', correlationId: 'c2' })
    expect(r.status < 300, `webhook answered ${r.status} ${r.text.slice(0, 200)}`)
    const { events } = await waitFor('the event', async () => {
      const res = await client.listEvents({ type: 'zapier:event' })
      return res.events.length && res
    }, 15_000)
    expect(events[0].payload?.correlationId === 'c2', JSON.stringify(events[0].payload))
  })

  // Make
  await step(results, 'make: callAction make:sendData posts to the webhook', async () => {
    const m = await serveIntegration(p, 'integrations/make')
    const inst = await install(p, bot.bot.id, 'make', m.integration.id, { webhookUrl: `${capture.url}/make` })
    const { output } = await client.callAction({ type: 'make:sendData', input: { data: '{"a":1}' } })
    const got = await waitFor('the POST', () => capture.requests.find((x) => x.path === '/make'), 10_000)
    expect(output?.success === true, `output ${JSON.stringify(output)}`)
    expect(JSON.stringify(got.body).includes('"a":1'), JSON.stringify(got.body))
    return statusOf(inst)
  })

  capture.close()
  telegram.close()
  return results
}
