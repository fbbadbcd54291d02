import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { AdminApi } from '../admin-api.js'
import { CONNECTION_OPTIONS, intOption, type CommandSpec, type Parsed, str } from '../args.js'
import { dataDir, readCredentials, resolveConnection } from '../connection.js'
import { CliError, UsageError } from '../errors.js'
import { err, out, style } from '../output.js'
import { ChatApi, ChatApiError } from '../../webchat/shared/chat-api.js'
import { describePayload, mapUrl, pickablesOf, type Pickable } from '../../webchat/shared/payload.js'
import { ResilientStream } from '../../webchat/shared/sse.js'
import type { MessagePayload, Signal, SignalMessage } from '../../webchat/shared/types.js'

/** Piped input: how long to wait for the bot's greeting before sending the first line (a bot without one costs this once). */
const GREETING_WAIT_MS = 3000

export const chat: CommandSpec = {
  name: 'chat',
  summary: 'Talk to a bot in the terminal, through the Chat API',
  usage: ['parley chat [--bot ID | --chat-url URL] [--user ID] [--name NAME]'],
  description: [
    'Choices, dropdowns, cards and carousels are shown as numbered options: type the number to pick one.',
    'Type /help for the commands, /quit (or Ctrl-D) to leave.',
    'Without --bot or --chat-url it talks to the demo bot of credentials.json. With --bot it asks the Admin API',
    'for that bot\'s Chat API address (so it needs a token); --chat-url needs nothing else.',
    'Each run is a new user and conversation, unless --user ID names an identity: the first run with it creates the',
    'user and conversation and keeps their key in <data-dir>/chat-users.json (mode 0600); later runs with the same ID',
    '(and the same bot) are that user again, in that conversation.',
    'Reading from a pipe (not a terminal), lines are sent one by one: after each, it waits for the bot\'s answer',
    '(up to --wait milliseconds, until the bot has been quiet for a moment), so numbers can pick options too.',
  ].join('\n'),
  options: {
    bot: { type: 'string', value: 'ID', description: 'The bot to talk to' },
    'chat-url': { type: 'string', value: 'URL', description: 'A Chat API base URL (integrations.chat.webhookUrl of the bot)' },
    name: { type: 'string', value: 'NAME', description: 'Your display name in the conversation' },
    user: { type: 'string', value: 'ID', description: 'An identity kept across runs (same user, same conversation)' },
    wait: { type: 'string', value: 'MS', description: 'With piped input: how long to wait for an answer to each line (default 5000)' },
    ...CONNECTION_OPTIONS,
  },
  examples: ['parley chat', 'parley chat --bot 0193…', 'parley chat --user alice', 'printf "help\\n1\\n" | parley chat'],
}

/** An identity of `parley chat --user`: the Chat API user's key, its id and its conversation. */
interface SavedIdentity { key: string; userId: string; conversationId: string }

/** <data-dir>/chat-users.json: identities by chat URL and --user id. */
function identities(dir: string): { path: string; all: Record<string, SavedIdentity> } {
  const path = join(dir, 'chat-users.json')
  try {
    return { path, all: JSON.parse(readFileSync(path, 'utf8')) as Record<string, SavedIdentity> }
  } catch {
    return { path, all: {} }
  }
}

function saveIdentity(dir: string, name: string, identity: SavedIdentity): void {
  const { path, all } = identities(dir)
  mkdirSync(dir, { recursive: true })
  writeFileSync(`${path}.tmp`, JSON.stringify({ ...all, [name]: identity }, null, 2) + '\n', { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
}

/** Lines for one message in the terminal, and the options it offers (numbered from `first`). */
export function renderForTerminal(payload: MessagePayload, first: number): { lines: string[]; options: Pickable[] } {
  const options = pickablesOf(payload)
  const number = (i: number) => `${first + i})`
  const optionLine = (p: Pickable, i: number) => `  ${number(i)} ${p.label}${p.kind === 'open' ? `  ↗ ${p.value}` : ''}`
  const lines: string[] = []
  switch (payload.type) {
    case 'card':
      lines.push(`▣ ${payload.title}${payload.subtitle ? ` — ${payload.subtitle}` : ''}`)
      if (payload.imageUrl) lines.push(`  image: ${payload.imageUrl}`)
      lines.push(...options.map(optionLine))
      break
    case 'carousel': {
      let i = 0
      for (const [n, item] of (payload.items ?? []).entries()) {
        lines.push(`▣ ${n + 1}/${payload.items.length} ${item.title}${item.subtitle ? ` — ${item.subtitle}` : ''}`)
        for (const _ of item.actions ?? []) {
          lines.push(optionLine(options[i]!, i))
          i++
        }
      }
      break
    }
    case 'choice':
    case 'dropdown':
      lines.push(payload.text, ...options.map(optionLine))
      break
    case 'location':
      lines.push(`📍 ${[payload.title, payload.address].filter(Boolean).join(', ') || 'Location'} (${payload.latitude}, ${payload.longitude})`, `  ${mapUrl(payload.latitude, payload.longitude)}`)
      break
    default:
      lines.push(...describePayload(payload).split('\n'))
  }
  return { lines, options }
}

async function chatUrlFor(values: Parsed['values']): Promise<string> {
  const explicit = str(values['chat-url'])
  if (explicit) return explicit.replace(/\/+$/, '')
  const botId = str(values.bot)
  if (botId) {
    const bot = await new AdminApi(resolveConnection(values)).getBot(botId)
    const integration = bot.integrations?.chat
    if (!integration?.enabled) throw new CliError(`Bot ${botId} has no enabled chat integration`, 'Enable it with updateBot({ integrations: { chat: { enabled: true } } }).')
    return integration.webhookUrl
  }
  const { credentials, path } = readCredentials(dataDir(values))
  if (credentials?.chat?.url) return credentials.chat.url
  throw new UsageError(`Which bot? No --bot or --chat-url, and no chat.url in ${path}`, 'Pass --bot ID (with a token) or --chat-url URL, or run where `parley serve` keeps its data (--data-dir).')
}

export async function runChat({ values }: Parsed): Promise<void> {
  const wait = intOption(values.wait, 'wait', 5000, 0)
  const url = await chatUrlFor(values)
  const api = new ChatApi(url)
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY)
  const o = process.stdout
  const botLabel = style.cyan(o)('bot ›')
  const youLabel = style.bold(o)('you ›')

  let me: string
  let conversationId: string
  const startedAt = Date.now()
  const userName = str(values.user)
  const identityKey = userName && `${url} ${userName}`
  const dir = dataDir(values)
  /** Messages of a resumed conversation, shown once as a count (not replayed). */
  let earlier: string[] = []
  let resumed = false
  try {
    const saved = identityKey ? identities(dir).all[identityKey] : undefined
    if (saved) {
      api.key = saved.key
      try {
        earlier = (await api.listMessages(saved.conversationId)).messages.map((m) => m.id)
        me = saved.userId
        conversationId = saved.conversationId
        resumed = true
      } catch (error) {
        // The user or the conversation is gone (the bot was re-created…): a fresh identity under the same name.
        if (!(error instanceof ChatApiError) || error.status === 0) throw error
        api.key = undefined
      }
    }
    if (!resumed) {
      const name = str(values.name) || userName
      const created = await api.createUser(name ? { name } : {})
      api.key = created.key
      me = created.user.id
      conversationId = (await api.createConversation()).conversation.id
      if (identityKey) saveIdentity(dir, identityKey, { key: created.key, userId: me, conversationId })
    }
    if (userName) err(style.dim(process.stderr)(resumed ? `You are ${userName} again (user ${me!}), in your conversation ${conversationId!} (${earlier.length} earlier message(s)).` : `You are ${userName} (user ${me!}); the next \`parley chat --user ${userName}\` continues this conversation.`))
  } catch (error) {
    if (error instanceof ChatApiError && error.status === 404) throw new CliError(`No chat at ${url} (unknown or disabled webhook)`, 'Check the bot id or the URL: `parley bots list`.')
    if (error instanceof ChatApiError && error.status === 0) throw new CliError(error.message, 'Is the server running (`parley serve`)?')
    throw error
  }
  if (interactive) err(style.dim(process.stderr)(`Connected to ${url} — type /help for help, /quit to leave.`))

  const seen = new Set<string>(earlier)
  let options: Pickable[] = []
  let lastActivity = Date.now()
  let lastReply = 0
  let rl: ReturnType<typeof createInterface> | undefined

  const print = (lines: string[]) => {
    if (rl && interactive) {
      // Keep the prompt below incoming messages.
      process.stdout.write('\r\u001b[2K')
      out(lines.join('\n'))
      rl.prompt(true)
    } else out(lines.join('\n'))
  }

  const show = (message: SignalMessage) => {
    if (seen.has(message.id)) return
    seen.add(message.id)
    lastActivity = Date.now()
    if (message.userId === me) return // what you typed is already on screen
    lastReply = Date.now()
    const rendered = renderForTerminal(message.payload, 1)
    if (rendered.options.length) options = rendered.options
    const [head = '', ...rest] = rendered.lines
    print([`${botLabel} ${head}`, ...rest.map((l) => `      ${l}`)])
  }

  let opened!: () => void
  const firstOpen = new Promise<void>((resolve) => (opened = resolve))
  const stream = new ResilientStream({
    url: () => api.listenUrl(conversationId),
    headers: () => api.authHeaders(),
    onFrame: (frame) => {
      try {
        const signal = JSON.parse(frame.data) as Signal
        if (signal.type === 'message_created') show(signal.data)
      } catch {
        // not a signal
      }
    },
    onStatus: (status, detail) => {
      if (status === 'reconnecting' && detail?.delayMs !== undefined && interactive) err(style.yellow(process.stderr)('connection lost; reconnecting…'))
    },
    onOpen: async () => {
      // What was sent before the stream was open (the bot's greeting, sent as the conversation is created), or
      // while it was down; `seen` drops repeats.
      const { messages } = await api.listMessages(conversationId).catch(() => ({ messages: [] }))
      for (const m of [...messages].reverse()) show(m)
      opened()
    },
  })
  stream.start()
  // Messages are sent once the stream is open (so no answer is missed); give up waiting after 5 s (the stream
  // keeps trying, and answers are caught up when it opens).
  let openTimer: NodeJS.Timeout | undefined
  await Promise.race([firstOpen, new Promise<void>((resolve) => (openTimer = setTimeout(resolve, 5000)))])
  clearTimeout(openTimer)

  /** Piped input: after a line, wait for the answer: a reply followed by a short quiet, or `wait` ms without one. */
  const settle = async (since: number, limit = wait) => {
    for (;;) {
      const now = Date.now()
      const replied = lastReply >= since
      if (replied && now - lastActivity >= 300) return
      if (!replied && now - since >= limit) return
      if (now - since >= Math.max(wait, 30_000)) return
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  const send = async (text: string) => {
    const since = Date.now()
    lastActivity = since
    const { message } = await api.createMessage(conversationId, { type: 'text', text })
    seen.add(message.id)
    lastActivity = Date.now()
    if (!interactive) await settle(since)
  }

  const help = () =>
    print([
      'Type a message and press Enter. Numbers pick the options of the last message that had some.',
      '  /options   show those options again',
      '  /quit      leave (or Ctrl-D)',
    ])

  const handle = async (line: string): Promise<boolean> => {
    const text = line.trim()
    if (!text) return true
    if (text === '/quit' || text === '/exit') return false
    if (text === '/help') {
      help()
      return true
    }
    if (text === '/options') {
      print(options.length ? options.map((p, i) => `  ${i + 1}) ${p.label}${p.kind === 'open' ? `  ↗ ${p.value}` : ''}`) : ['No options right now.'])
      return true
    }
    const n = /^\d+$/.test(text) ? Number(text) : NaN
    const picked = Number.isInteger(n) ? options[n - 1] : undefined
    if (picked) {
      if (picked.kind === 'open') {
        print([`Open ${picked.value} in your browser.`])
        return true
      }
      print([`${youLabel} ${picked.label}${picked.value !== picked.label ? style.dim(o)(` (${picked.value})`) : ''}`])
      await send(picked.value)
    } else {
      if (!interactive) print([`${youLabel} ${text}`])
      await send(text)
    }
    return true
  }

  // Piped input: the bot's greeting (if it has one) comes before the first line is sent.
  if (!interactive && !resumed) await settle(startedAt, Math.min(wait, GREETING_WAIT_MS))

  rl = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive, prompt: `${youLabel} ` })
  if (interactive) rl.prompt()
  let quit = false
  let failure: unknown
  // Lines are handled one at a time, in order.
  let queue = Promise.resolve()
  rl.on('line', (line) => {
    queue = queue.then(async () => {
      if (quit) return
      try {
        if (!(await handle(line))) {
          quit = true
          rl?.close()
        }
      } catch (error) {
        if (interactive) err(style.red(process.stderr)(`Not sent: ${error instanceof Error ? error.message : String(error)}`))
        else {
          failure = error
          quit = true
          rl?.close()
        }
      }
      if (interactive && !quit) rl?.prompt()
    })
  })
  await new Promise<void>((resolve) => rl!.once('close', () => resolve()))
  await queue
  await stream.stop()
  if (failure) throw failure instanceof ChatApiError ? new CliError(`Message not sent: ${failure.message}`) : failure
}
