/**
 * Per-bot webchat settings through the official `@botpress/client@1.45.0` over real HTTP: stored with the bot
 * (updateBot's `integrations.chat.configuration.webchat`, or `webchat` over plain HTTP), merged and removed key by
 * key, refused with a 400 in the Botpress error body when bad, answered by getBotWebchat's four embed code types,
 * and served on the webchat page.
 */
import { Client, InvalidPayloadError, ResourceNotFoundError, isApiError } from '@botpress/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startParley, freePort, type Harness } from '../helpers/harness.js'
import { WEBCHAT_SETTINGS } from '../helpers/webchat-settings.js'

async function startListening(): Promise<Harness> {
  const port = await freePort()
  const h = await startParley({ config: { publicUrl: `http://127.0.0.1:${port}` } })
  await h.app.listen({ port, host: '127.0.0.1' })
  return h
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

const SETTINGS = WEBCHAT_SETTINGS

describe('webchat settings (Admin API, official client)', () => {
  let h: Harness
  let client: Client

  beforeAll(async () => {
    h = await startListening()
    client = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: h.credentials.workspaceId })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('updateBot stores them with the bot (integrations.chat.configuration.webchat); getBot shows them; keys merge and null removes one', async () => {
    const { bot: created } = await client.createBot({ name: 'settings-bot' })
    expect((created as unknown as { webchat: unknown }).webchat).toEqual({})
    await client.updateBot({ id: created.id, integrations: { chat: { configuration: { webchat: SETTINGS } } } })
    const { bot } = await client.getBot({ id: created.id })
    expect((bot as unknown as { webchat: unknown }).webchat).toEqual(SETTINGS)
    expect(bot.integrations.chat!.configuration.webchat).toEqual(SETTINGS)
    expect(bot.integrations.chat!.enabled).toBe(true)

    // Another update merges: one key changed, one removed, the others kept; other updates leave them alone.
    await client.updateBot({ id: bot.id, integrations: { chat: { configuration: { webchat: { primaryColor: '#abc', launcherIconUrl: null } } } } })
    await client.updateBot({ id: bot.id, name: 'renamed' })
    const { bot: after } = await client.getBot({ id: bot.id })
    const { launcherIconUrl: _removed, ...rest } = SETTINGS
    expect((after as unknown as { webchat: unknown }).webchat).toEqual({ ...rest, primaryColor: '#abc' })
  })

  it('`webchat` over plain HTTP too (createBot and updateBot); null removes them all', async () => {
    const post = await fetch(`${h.baseUrl}/v1/admin/bots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'http-bot', webchat: { botName: 'Bo', radius: 0 } }),
    })
    const { bot } = (await post.json()) as { bot: { id: string; webchat: unknown } }
    expect(post.status).toBe(201)
    expect(bot.webchat).toEqual({ botName: 'Bo', radius: 0 })
    const put = await fetch(`${h.baseUrl}/v1/admin/bots/${bot.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${h.credentials.token}`, 'x-workspace-id': h.credentials.workspaceId, 'content-type': 'application/json' },
      body: JSON.stringify({ webchat: null }),
    })
    expect(put.status).toBe(200)
    expect(((await put.json()) as { bot: { webchat: unknown } }).bot.webchat).toEqual({})
  })

  it('refuses bad settings with 400 InvalidPayload naming the field, and stores nothing of that update', async () => {
    const { bot } = await client.createBot({ name: 'strict-bot' })
    await client.updateBot({ id: bot.id, integrations: { chat: { configuration: { webchat: { botName: 'Kept' } } } } })
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ primaryColor: 'red' }, /primaryColor must be a hex colour/],
      [{ launcherBadgeColor: '#12345' }, /launcherBadgeColor must be a hex colour/],
      [{ primaryColor: '#12345' }, /primaryColor/],
      [{ primaryColor: '#fff; background:url(x)' }, /primaryColor/],
      [{ radius: 33 }, /radius must be an integer from 0 to 32/],
      [{ radius: '4' }, /radius/],
      [{ themeMode: 'sepia' }, /themeMode must be one of "light", "dark", "auto"/],
      [{ botAvatarUrl: 'javascript:alert(1)' }, /botAvatarUrl must be an absolute http: or https: URL/],
      [{ fontFamily: 'x; } body { display:none' }, /fontFamily/],
      [{ botName: '' }, /botName must not be empty/],
      [{ botName: 'x'.repeat(81) }, /botName must be at most 80 characters/],
      [{ colour: '#fff' }, /colour is not a webchat setting/],
    ]
    for (const [webchat, message] of bad) {
      const err = await rejection(client.updateBot({ id: bot.id, name: 'changed', integrations: { chat: { configuration: { webchat } } } }))
      expect(err, JSON.stringify(webchat)).toBeInstanceOf(InvalidPayloadError)
      expect(isApiError(err) && err.code).toBe(400)
      expect((err as Error).message).toMatch(message)
    }
    const err = await rejection(client.updateBot({ id: bot.id, integrations: { chat: { configuration: { webchat: ['not', 'an', 'object'] as never } } } }))
    expect(err).toBeInstanceOf(InvalidPayloadError)
    const { bot: after } = await client.getBot({ id: bot.id })
    expect(after.name).toBe('strict-bot')
    expect((after as unknown as { webchat: unknown }).webchat).toEqual({ botName: 'Kept' })
  })

  it('getBotWebchat answers each embed code type carrying the settings', async () => {
    const { bot } = await client.createBot({ name: 'embed-bot' })
    await client.updateBot({ id: bot.id, integrations: { chat: { configuration: { webchat: { botName: 'Ada & "co" <b>', primaryColor: '#0b6e4f', radius: 6 } } } } })
    const { bot: full } = await client.getBot({ id: bot.id })
    const webhookId = full.integrations.chat!.webhookId

    const { code: pre } = await client.getBotWebchat({ id: bot.id, type: 'preconfigured' })
    expect(pre).toContain(`src="${h.baseUrl}/webchat/embed.js"`)
    expect(pre).toContain(`data-webhook-id="${webhookId}"`)
    expect(pre).toContain('data-bot-name="Ada &amp; &quot;co&quot; &lt;b&gt;"')
    expect(pre).toContain('data-primary-color="#0b6e4f"')
    expect(pre).toContain('data-radius="6"')

    const { code: conf } = await client.getBotWebchat({ id: bot.id, type: 'configurable' })
    const json = /<script type="application\/json" id="parley-webchat-config">\n([\s\S]*?)\n<\/script>/.exec(conf)
    expect(json, conf).not.toBeNull()
    const parsed = JSON.parse(json![1]!) as Record<string, unknown>
    expect(parsed).toMatchObject({ webhookId, botName: 'Ada & "co" <b>', primaryColor: '#0b6e4f', radius: 6, themeMode: null })
    expect(json![1]).not.toContain('<b>') // cannot close the script element
    expect(conf).toContain(`<script src="${h.baseUrl}/webchat/embed.js" data-config="parley-webchat-config" async></script>`)

    const { code: full1 } = await client.getBotWebchat({ id: bot.id, type: 'fullscreen' })
    expect(full1).toMatch(/^<!doctype html>/)
    expect(full1).toContain(`<iframe src="${h.baseUrl}/webchat/${webhookId}"`)
    expect(full1).toContain('<title>Ada &amp; &quot;co&quot; &lt;b&gt;</title>')

    const { code: url } = await client.getBotWebchat({ id: bot.id, type: 'sharableUrl' })
    expect(url).toBe(`${h.baseUrl}/webchat/${webhookId}`)
    // The page at that address carries the settings (escaped), and its title is the bot's name.
    const html = await (await fetch(url)).text()
    expect(html).toContain('<h1 id="pw-title">Ada &amp; &quot;co&quot; &lt;b&gt;</h1>')
    expect(html).toContain('data-config="{&quot;botName&quot;:&quot;Ada &amp; \\&quot;co\\&quot; &lt;b&gt;&quot;')

    // Botpress's own webchat (issue #30): getBot names its apiUrl and clientId; getBotWebchat gives the React snippet.
    expect(full.integrations.chat).toMatchObject({ webchatApiUrl: `${h.baseUrl}/webchat-api`, webchatClientId: webhookId })
    const { code: react } = await client.getBotWebchat({ id: bot.id, type: 'botpressWebchat' as never })
    expect(react).toContain(`<Webchat clientId="${webhookId}" apiUrl="${h.baseUrl}/webchat-api" />`)
    expect(react).toContain("import { Webchat } from '@botpress/webchat'")
  })

  it('getBotWebchat: an unknown type is 400, another workspace\'s bot 404, a bot without chat 400', async () => {
    const { bot } = await client.createBot({ name: 'errors-bot' })
    const badType = await rejection(client.getBotWebchat({ id: bot.id, type: 'inline' as never }))
    expect(isApiError(badType) && badType.code).toBe(400)
    expect(await rejection(client.getBotWebchat({ id: 'no-such-bot', type: 'sharableUrl' }))).toBeInstanceOf(ResourceNotFoundError)
    const workspace = await client.createWorkspace({ name: 'other' })
    const other = new Client({ apiUrl: h.baseUrl, token: h.credentials.token, workspaceId: workspace.id })
    expect(await rejection(other.getBotWebchat({ id: bot.id, type: 'sharableUrl' }))).toBeInstanceOf(ResourceNotFoundError)
    await client.updateBot({ id: bot.id, integrations: { chat: null } })
    const noChat = await rejection(client.getBotWebchat({ id: bot.id, type: 'preconfigured' }))
    expect(noChat).toBeInstanceOf(InvalidPayloadError)
    expect((noChat as Error).message).toMatch(/no enabled chat integration/)
  })
})
