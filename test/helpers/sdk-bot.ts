/**
 * An unchanged @botpress/sdk bot (a script of test/fixtures/sdk-bots/) run as a real child process on
 * a free port, its Runtime API client pointed at Parley through the environment the SDK reads
 * (BP_API_URL, BP_TOKEN, BP_BOT_ID). `url` is what updateBot({ url }) is given; `stop`/`kill` end it,
 * `start` runs it again on the same port (a restarted bot).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.js'
import type { Harness } from './harness.js'
import { adminClient, createBot, type TestBot } from '../runtime/helpers.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/sdk-bots/', import.meta.url))

export interface SdkBotOptions {
  /** Parley's base URL (BP_API_URL). */
  apiUrl: string
  /** A bot API key of that bot (BP_TOKEN): createBotApiKey. */
  token: string
  botId: string
  /** More environment for the script. */
  env?: Record<string, string>
}

export interface SdkBot {
  url: string
  port: number
  /** What the process wrote (stdout and stderr), for failure messages. */
  output(): string
  /** Starts it (again) on the same port, `env` over the options' environment; resolves once /health answers. */
  start(env?: Record<string, string>): Promise<void>
  /** SIGKILL, at once (a crash mid-turn). */
  kill(): Promise<void>
  /** SIGTERM, then SIGKILL after a second. */
  stop(): Promise<void>
}

export async function startSdkBot(script: string, options: SdkBotOptions): Promise<SdkBot> {
  const port = await freePort()
  let child: ChildProcess | undefined
  let log = ''
  const exited = () => new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
  })
  const bot: SdkBot = {
    url: `http://127.0.0.1:${port}/`,
    port,
    output: () => log,
    async start(env = {}) {
      child = spawn(process.execPath, [`${FIXTURES}${script}`], {
        env: { ...process.env, PORT: String(port), BP_API_URL: options.apiUrl, BP_TOKEN: options.token, BP_BOT_ID: options.botId, ...options.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child.stdout!.on('data', (d: Buffer) => (log += d.toString()))
      child.stderr!.on('data', (d: Buffer) => (log += d.toString()))
      const deadline = Date.now() + 15_000
      for (;;) {
        if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}: ${log}`)
        try {
          const res = await fetch(`${bot.url}health`)
          if (res.ok) return
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`${script} did not answer /health within 15 s: ${log}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    async kill() {
      child?.kill('SIGKILL')
      await exited()
    },
    async stop() {
      if (!child) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child?.kill('SIGKILL'), 1000)
      await exited()
      clearTimeout(timer)
    },
  }
  await bot.start()
  return bot
}

/** A bot of `h` served by the SDK program `script`, with a bot API key and the given state declarations. */
export async function deploySdkBot(h: Harness, script: string, states: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<{ bot: TestBot; program: SdkBot }> {
  const admin = adminClient(h)
  const bot = await createBot(h)
  const key = await admin.createBotApiKey({ botId: bot.id, note: 'sdk bot' })
  const program = await startSdkBot(script, { apiUrl: h.baseUrl, token: key.value, botId: bot.id, env })
  await admin.updateBot({ id: bot.id, url: program.url, ...(Object.keys(states).length > 0 && { states: states as never }) })
  return { bot, program }
}

