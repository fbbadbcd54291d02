// `echo-e2e`: bots/echo served with `bp serve` behind a Parley bot; the chat-client e2e suite of the tree
// (packages/chat-client/e2e, 23 tests) run against the bot's chat webhook url; then every echo command.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOTPRESS_DIR, DEPS_DIR, LOG_DIR, depsRequire, errText, log, run, sleep } from './lib.mjs'
import { serveBot } from './projects.mjs'

/** The chat's `apiUrl` and `encryptionKey` of a bot (getBot's view of its built-in chat integration). */
export function chatOf(bot) {
  const chat = bot.integrations?.chat ?? {}
  return { apiUrl: chat.webhookUrl, encryptionKey: chat.configuration?.encryptionKey ?? chat.encryptionKey }
}

/** The e2e suite as the tree runs it; its `../src` imports are @botpress/chat 0.5.5 (the npm build of that source). */
function runE2e(apiUrl, encryptionKey) {
  const config = join(DEPS_DIR, 'chat-e2e.vitest.config.mjs')
  const chatEntry = depsRequire.resolve('@botpress/chat')
  writeFileSync(config, `export default ${JSON.stringify({
    root: join(BOTPRESS_DIR, 'packages/chat-client'),
    resolve: { alias: [{ find: '../src', replacement: chatEntry }] },
    test: { testTimeout: 20_000, include: ['./e2e/**/*.test.ts'], fileParallelism: false },
  })}\n`)
  const report = join(LOG_DIR, 'chat-e2e.json')
  run('chat-e2e', process.execPath, [join(DEPS_DIR, 'node_modules/vitest/vitest.mjs'), 'run', '--config', config, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], {
    cwd: join(BOTPRESS_DIR, 'packages/chat-client'), env: { API_URL: apiUrl, ENCRYPTION_KEY: encryptionKey },
  })
  let json
  try { json = JSON.parse(readFileSync(report, 'utf8')) } catch { return [{ name: 'chat-client e2e', ok: false, detail: 'no report (logs/chat-e2e.log)' }] }
  return json.testResults.flatMap((file) => file.assertionResults.map((t) => ({
    name: `e2e ${file.name.split('/').pop().replace('.test.ts', '')}: ${t.title}`,
    ok: t.status === 'passed',
    detail: t.status === 'passed' ? '' : (t.failureMessages ?? []).join(' ').split('\n')[0].slice(0, 220),
  })))
}

/** What each command of bots/echo must answer (count of bot messages, and a check of the first). */
const COMMANDS = [
  ['text', (m) => m.payload.text === 'Hello, world!'],
  ['markdown', (m) => m.payload.type === 'markdown' || 'markdown' in m.payload],
  ['image', (m) => 'imageUrl' in m.payload], ['location', (m) => 'latitude' in m.payload],
  ['pdf', (m) => 'fileUrl' in m.payload], ['file', (m) => 'fileUrl' in m.payload],
  ['video', (m) => 'videoUrl' in m.payload], ['audio', (m) => 'audioUrl' in m.payload],
  ['choice', (m) => m.payload.options?.length === 3], ['dropdown', (m) => m.payload.options?.length === 8],
  ['card', (m) => m.payload.title === 'title'], ['carousel', (m) => m.payload.items?.length === 2],
  ['link', (m) => m.payload.text?.includes('google')], ['empty_choice', (m) => Array.isArray(m.payload.options)],
  ['empty_card', (m) => m.payload.title === 'title'],
  ['bloc', (m) => m.payload.type === 'bloc' && m.payload.items?.length === 3],
  ['metadata', (m) => m.payload.text === 'metadata' && m.metadata?.corpus === 'yes'],
  ['something else', (m) => m.payload.text?.includes('You said: "something else"')],
]

async function echoCommands(apiUrl) {
  const chat = depsRequire('@botpress/chat')
  const client = await chat.Client.connect({ apiUrl })
  const results = []
  const botMessages = async (conversationId) => (await client.listMessages({ conversationId })).messages.filter((m) => m.userId !== client.user.id)
  // `message` is more of the Chat API's createMessage (its `metadata` sits beside the payload, as the e2e suite sends it).
  const say = async (text, message = {}) => {
    const { conversation } = await client.createConversation({})
    try {
      await client.createMessage({ conversationId: conversation.id, payload: { type: 'text', text }, ...message })
    } catch (e) { return { conversationId: conversation.id, error: errText(e) } }
    return { conversationId: conversation.id }
  }
  for (const [command, check] of COMMANDS) {
    const sent = await say(command, command === 'metadata' ? { metadata: { corpus: 'yes' } } : {})
    if (sent.error) { results.push({ name: `echo ${command}`, ok: false, detail: `createMessage refused: ${sent.error}` }); continue }
    let msgs = []
    for (let i = 0; i < 60 && msgs.length === 0; i++) { await sleep(250); msgs = await botMessages(sent.conversationId) }
    await sleep(300)
    msgs = await botMessages(sent.conversationId)
    const ok = msgs.length === 1 && check(msgs[0])
    results.push({ name: `echo ${command}`, ok, detail: ok ? '' : msgs.length ? `${msgs.length} answer(s): ${JSON.stringify(msgs[0].payload).slice(0, 200)}` : 'no answer (see logs/corpus-echo.log, logs/parley.log)' })
  }
  // `loop`: 20 messages one second apart; the count is read again well after the last (a repeated delivery adds more).
  const loop = await say('loop')
  if (loop.error) results.push({ name: 'echo loop', ok: false, detail: loop.error })
  else {
    const wait = Number(process.env.CORPUS_LOOP_WAIT_MS ?? 45_000)
    log(`echo loop: counting answers for ${wait / 1000} s …`)
    await sleep(wait)
    const n = (await botMessages(loop.conversationId)).length
    results.push({ name: 'echo loop', ok: n === 20, detail: n === 20 ? '' : `${n} messages (expected 20)` })
  }
  return results
}

export async function echoE2e(p) {
  const echo = await serveBot(p, 'bots/echo', 'corpus-echo')
  const { apiUrl, encryptionKey } = chatOf(echo.bot)
  if (!apiUrl) throw new Error(`the bot has no chat webhook url: ${JSON.stringify(echo.bot.integrations)}`)
  log(`echo bot ${echo.bot.id} served at ${echo.url}; chat ${apiUrl}`)
  const results = runE2e(apiUrl, encryptionKey ?? '')
  log(`chat-client e2e: ${results.filter((r) => r.ok).length}/${results.length} passed`)
  if (process.env.CORPUS_SKIP_COMMANDS !== '1') results.push(...await echoCommands(apiUrl))
  return results
}
