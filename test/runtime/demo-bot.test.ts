/**
 * The demo bot created at first start (bootstrap with its code), through the official chat client
 * on the bootstrap credentials: it greets, answers "help" with a choice, shows each of the 12
 * payload types on "show <type>" (each one valid: the server validates what bots send), runs the
 * sign-up workflow with its captures (including a retry), then remembers the name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, type Harness } from '../helpers/harness.js'
import { listAll, STREAM_CONFIG, Talk, textOf, uid } from './helpers.js'

const TYPES = ['text', 'markdown', 'image', 'audio', 'video', 'file', 'location', 'card', 'carousel', 'choice', 'dropdown', 'bloc'] as const

describe('runtime: the demo bot', () => {
  let h: Harness
  let talk: Talk

  beforeAll(async () => {
    h = await startParley({ listen: true, demoBot: true, config: STREAM_CONFIG })
    talk = await Talk.open({ url: h.credentials.chat.url, encryptionKey: h.credentials.chat.encryptionKey }, { userId: uid('visitor') })
  })
  afterAll(async () => {
    await talk?.close()
    await h?.close()
  })

  it('greets when the conversation opens, before the user types; the first message ("help") is answered with the help menu', async () => {
    const [greeting] = (await talk.botCount(1)).map(textOf)
    expect(greeting).toMatch(/demo bot/i)
    expect(greeting).toMatch(/help/)
    expect(talk.messages.filter((m) => !m.isBot)).toEqual([])
    const [help] = await talk.ask('help')
    expect(help!.payload.type).toBe('choice')
    expect(await talk.quiet(300)).toEqual([])
    // the greeting came once
    expect(talk.botTexts().filter((t) => /demo bot/i.test(t))).toHaveLength(1)
  })

  it('answers "help" with a choice listing every payload type and the sign-up', async () => {
    const [help] = await talk.ask('help')
    expect(help!.payload.type).toBe('choice')
    const options = (help!.payload as { options: Array<{ label: string; value: string }> }).options
    const values = options.map((o) => o.value)
    for (const type of TYPES) expect(values).toContain(`show ${type}`)
    expect(values).toContain('sign up')
    for (const o of options) expect(o.label.length).toBeGreaterThan(0)
  })

  it('echoes other messages, counting them', async () => {
    const [echo] = await talk.askText('what is this?')
    expect(echo).toMatch(/^You said: what is this\?/)
    expect(echo).toMatch(/message \d+/)
  })

  for (const type of TYPES) {
    it(`"show ${type}" sends a valid ${type} message`, async () => {
      const [shown] = await talk.ask(`show ${type}`)
      expect(shown!.payload.type).toBe(type)
      expect(shown!.isBot).toBe(true)
      // stored as delivered
      const { message } = await talk.user.getMessage({ id: shown!.id })
      expect(message.payload).toEqual(shown!.payload)
    })
  }

  it('the shown payloads carry their content (as stored)', async () => {
    const stored = (await listAll(talk.user, talk.conversationId)).filter((m) => m.userId !== talk.user.user.id)
    const byType = new Map(stored.map((m) => [m.payload.type as string, m.payload as Record<string, any>]))
    for (const type of TYPES) expect(byType.has(type)).toBe(true)
    expect(byType.get('text')!.text).toEqual(expect.any(String))
    expect(byType.get('markdown')!.markdown).toEqual(expect.any(String))
    // The image, audio, video and PDF are served by this server (shipped in assets/demo/), not by an outside host.
    expect(byType.get('image')!.imageUrl).toBe(`${h.baseUrl}/demo/assets/parley.svg`)
    expect(byType.get('audio')!.audioUrl).toBe(`${h.baseUrl}/demo/assets/sample.wav`)
    expect(byType.get('video')!.videoUrl).toBe(`${h.baseUrl}/demo/assets/sample.webm`)
    expect(byType.get('file')!.fileUrl).toBe(`${h.baseUrl}/demo/assets/sample.pdf`)
    for (const url of [byType.get('image')!.imageUrl, byType.get('audio')!.audioUrl, byType.get('video')!.videoUrl, byType.get('file')!.fileUrl] as string[]) {
      expect((await fetch(url)).status, url).toBe(200)
    }
    expect(byType.get('location')!).toMatchObject({ latitude: expect.any(Number), longitude: expect.any(Number) })
    expect(byType.get('card')!.actions.length).toBeGreaterThan(0)
    expect(byType.get('carousel')!.items.length).toBeGreaterThan(1)
    expect(byType.get('choice')!.options.length).toBeGreaterThan(1)
    expect(byType.get('dropdown')!.options.length).toBeGreaterThan(1)
    expect(byType.get('bloc')!.items.length).toBeGreaterThan(1)
  })

  it('runs the sign-up workflow: name capture, email capture with a retry, confirmation, then remembers the name', async () => {
    expect(await talk.askText('Sign up')).toEqual(['What is your name?'])
    expect(await talk.askText('Ann')).toEqual(['And your email, Ann?'])
    const [retry] = await talk.askText('not an email')
    expect(retry).toMatch(/does not look like an email/i)
    expect(await talk.askText('ann@example.com')).toEqual(['Thanks Ann, you are signed up with ann@example.com.'])
    const [echo] = await talk.askText('hello again')
    expect(echo).toMatch(/^You said: hello again \(message \d+, Ann\)/)
  })

  it('a new conversation of the same user is greeted again and still knows the name', async () => {
    const again = await Talk.open({ url: h.credentials.chat.url, encryptionKey: h.credentials.chat.encryptionKey }, { user: talk.user })
    try {
      const [greeting] = (await again.botCount(1)).map(textOf)
      expect(greeting).toMatch(/demo bot/i)
      const [echo] = await again.askText('who am I?')
      expect(echo).toMatch(/Ann\)/)
      expect(textOf((await again.botCount(2))[1]!)).toBe(echo)
    } finally {
      await again.close()
    }
  })
})
