/**
 * The demo bot as shipped and as restored (`parley demo`, the real binary): its image, audio and PDF are
 * served by the server itself (no outside host), `parley demo` puts its code back after a deploy replaced it
 * and re-creates it (updating credentials.json) when it was deleted; and `parley chat --user ID` is the same
 * user in the same conversation from one run to the next.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatApi } from '../../src/webchat/shared/chat-api.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { adminClient } from '../helpers/runtime-client.js'
import { ensureBuilt, FIXTURES, runCli } from './helpers.js'

describe('parley demo, demo assets and parley chat --user', () => {
  let h: Harness
  let dir: string[]

  beforeAll(async () => {
    // demoBot: the demo bot starts with its shipped code, as on a first `npm start`.
    ;[h] = await Promise.all([startParley({ listen: true, demoBot: true }), ensureBuilt()])
    dir = ['--data-dir', h.dataDir]
  }, 180_000)
  afterAll(async () => h?.close())

  // The Admin API does not show code: read the deployed code from the store.
  const codeOf = async (id: string) => (await h.store.getBot(id))?.code

  it('the demo bot\'s image, audio and PDF are served by this server (no outside host)', async () => {
    const admin = adminClient(h)
    const logs = await admin.getBotLogs({ id: h.credentials.botId, timeStart: new Date(0).toISOString() })
    expect(logs.logs.filter((l) => l.level === 'error')).toEqual([])
    const api = new ChatApi(h.credentials.chat.url)
    api.key = (await api.createUser({})).key
    const { conversation } = await api.createConversation()
    const urls: string[] = []
    for (const what of ['image', 'audio', 'file', 'card']) {
      const { message } = await api.createMessage(conversation.id, { type: 'text', text: `show ${what}` })
      const deadline = Date.now() + 20_000
      for (;;) {
        const { messages } = await api.listMessages(conversation.id)
        const reply = messages.find((m) => m.userId !== message.userId && Date.parse(m.createdAt) >= Date.parse(message.createdAt) && m.payload.type === what)
        if (reply) {
          const p = reply.payload as unknown as Record<string, string>
          urls.push(p.imageUrl ?? p.audioUrl ?? p.fileUrl ?? '')
          break
        }
        if (Date.now() > deadline) throw new Error(`no ${what} from the demo bot`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    for (const url of urls) expect(url.startsWith(`${h.baseUrl}/demo/assets/`), url).toBe(true)
    const types = await Promise.all(urls.map(async (url) => {
      const res = await fetch(url)
      expect(res.status, url).toBe(200)
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100)
      return res.headers.get('content-type')
    }))
    expect(types).toEqual(['image/svg+xml', 'audio/wav', 'application/pdf', 'image/svg+xml'])
    expect((await fetch(`${h.baseUrl}/demo/assets/..%2Fpackage.json`)).status).toBe(404)
    expect((await fetch(`${h.baseUrl}/demo/assets/nothing.png`)).status).toBe(404)
  })

  it('parley demo restores the demo code after a deploy with --bot replaced it', async () => {
    const shipped = await codeOf(h.credentials.botId)
    expect(shipped).toContain('/demo/assets/')
    const replaced = await runCli(['deploy', join(FIXTURES, 'ts-bot'), '--bot', h.credentials.botId, ...dir])
    expect(replaced.code, replaced.stderr).toBe(0)
    expect(await codeOf(h.credentials.botId)).not.toBe(shipped)

    const restored = await runCli(['demo', ...dir])
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout.trim()).toBe(h.credentials.botId)
    expect(restored.stderr).toContain(`Restored the demo code on "Demo bot" (${h.credentials.botId})`)
    expect(await codeOf(h.credentials.botId)).toBe(shipped)
  })

  it('parley chat --user keeps the identity across runs: same user, same conversation', async () => {
    const first = await runCli(['chat', '--user', 'alice', '--wait', '3000', ...dir], { input: 'hello\n', timeoutMs: 30_000 })
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toMatch(/You are alice \(user [^)]+\); the next `parley chat --user alice` continues this conversation\./)
    const saved = JSON.parse(readFileSync(join(h.dataDir, 'chat-users.json'), 'utf8')) as Record<string, { key: string; userId: string; conversationId: string }>
    const identity = saved[`${h.credentials.chat.url} alice`]!
    expect(identity).toMatchObject({ userId: expect.any(String), conversationId: expect.any(String), key: expect.any(String) })

    const second = await runCli(['chat', '--user', 'alice', '--wait', '3000', ...dir], { input: 'again\n', timeoutMs: 30_000 })
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toContain(`You are alice again (user ${identity.userId}), in your conversation ${identity.conversationId}`)
    // Both lines are in one conversation, from one user.
    const api = new ChatApi(h.credentials.chat.url, identity.key)
    const mine = (await api.listMessages(identity.conversationId)).messages.filter((m) => m.userId === identity.userId)
    expect(mine.map((m) => (m.payload as { text?: string }).text).reverse()).toEqual(['hello', 'again'])

    // Another --user is another identity.
    const bob = await runCli(['chat', '--user', 'bob', '--wait', '1000', ...dir], { input: '', timeoutMs: 30_000 })
    expect(bob.code, bob.stderr).toBe(0)
    const all = JSON.parse(readFileSync(join(h.dataDir, 'chat-users.json'), 'utf8')) as Record<string, { userId: string }>
    expect(all[`${h.credentials.chat.url} bob`]!.userId).not.toBe(identity.userId)
  })

  it('parley demo re-creates a deleted demo bot and points credentials.json at it', async () => {
    await adminClient(h).deleteBot({ id: h.credentials.botId })
    const result = await runCli(['demo', ...dir])
    expect(result.code, result.stderr).toBe(0)
    const id = result.stdout.trim()
    expect(id).not.toBe(h.credentials.botId)
    expect(result.stderr).toContain('Created a new demo bot "Demo bot"')
    const credentials = JSON.parse(readFileSync(join(h.dataDir, 'credentials.json'), 'utf8')) as { botId: string; chat: { url: string; webhookId: string } }
    expect(credentials.botId).toBe(id)
    expect(credentials.chat.url).toContain(credentials.chat.webhookId)
    expect(await codeOf(id)).toContain('/demo/assets/')
  })
})
