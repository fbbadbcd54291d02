import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MessageView } from '../../src/domain/chat-views.js'
import { startParley, type Harness } from '../helpers/harness.js'
import { ChatClient, expectApiError, fid } from '../helpers/chat-client.js'

/**
 * createMessage payloads, exactly per the spec tables (platform-api.md "Message payload types"
 * and "Sub-objects") plus `bloc` and `metadata` from wire-compat §1.5/§4.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObj = { [key: string]: Json }
type Path = (string | number)[]

const action = (kind: 'postback' | 'url' | 'say') => ({ action: kind, label: `${kind} label`, value: `${kind} value` })
const cardItem = (): JsonObj => ({ title: 'Item title', subtitle: 'Item subtitle', imageUrl: 'https://img.example/item.png', actions: [action('postback'), action('url'), action('say')] })

/** One valid example per type, every optional field present. */
const VALID: Record<string, JsonObj> = {
  audio: { type: 'audio', audioUrl: 'https://media.example/a.mp3' },
  card: { type: 'card', title: 'Card title', subtitle: 'Card subtitle', imageUrl: 'https://img.example/c.png', actions: [action('postback'), action('url'), action('say')] },
  carousel: { type: 'carousel', items: [cardItem(), { ...cardItem(), title: 'Second' }] },
  choice: { type: 'choice', text: 'Pick one', options: [{ label: 'One', value: '1' }, { label: 'Two', value: '2' }] },
  dropdown: { type: 'dropdown', text: 'Choose', options: [{ label: 'Red', value: 'red' }] },
  file: { type: 'file', fileUrl: 'https://files.example/f.pdf', title: 'A file' },
  image: { type: 'image', imageUrl: 'https://img.example/i.png' },
  location: { type: 'location', latitude: 45.5017, longitude: -73.5673, address: '1 Main St', title: 'Office' },
  markdown: { type: 'markdown', markdown: '# Title\n*bold*' },
  text: { type: 'text', text: 'Hello' },
  video: { type: 'video', videoUrl: 'https://media.example/v.mp4' },
  bloc: {
    type: 'bloc',
    items: [
      { type: 'text', text: 'one' },
      { type: 'markdown', markdown: '**two**' },
      { type: 'image', imageUrl: 'https://img.example/3.png' },
      { type: 'audio', audioUrl: 'https://media.example/4.mp3' },
      { type: 'video', videoUrl: 'https://media.example/5.mp4' },
      { type: 'file', fileUrl: 'https://files.example/6.pdf', title: 'six' },
      { type: 'location', latitude: 1.5, longitude: 2.5, address: 'seven', title: 'Seven' },
    ],
  },
}

/** Minimal valid examples: required fields only. */
const MINIMAL: Record<string, JsonObj> = {
  audio: { type: 'audio', audioUrl: 'a' },
  card: { type: 'card', title: 't', actions: [] },
  carousel: { type: 'carousel', items: [] },
  choice: { type: 'choice', text: 't', options: [] },
  dropdown: { type: 'dropdown', text: 't', options: [] },
  file: { type: 'file', fileUrl: 'f' },
  image: { type: 'image', imageUrl: 'i' },
  location: { type: 'location', latitude: 0, longitude: 0 },
  markdown: { type: 'markdown', markdown: 'm' },
  text: { type: 'text', text: 't' },
  video: { type: 'video', videoUrl: 'v' },
  bloc: { type: 'bloc', items: [] },
}

/** Required fields, as paths into VALID[type]. */
const REQUIRED: [string, Path][] = [
  ['audio', ['audioUrl']],
  ['card', ['title']], ['card', ['actions']],
  ['card', ['actions', 0, 'action']], ['card', ['actions', 0, 'label']], ['card', ['actions', 0, 'value']],
  ['carousel', ['items']],
  ['carousel', ['items', 0, 'title']], ['carousel', ['items', 0, 'actions']],
  ['carousel', ['items', 0, 'actions', 1, 'action']], ['carousel', ['items', 0, 'actions', 1, 'label']], ['carousel', ['items', 0, 'actions', 1, 'value']],
  ['choice', ['text']], ['choice', ['options']], ['choice', ['options', 0, 'label']], ['choice', ['options', 0, 'value']],
  ['dropdown', ['text']], ['dropdown', ['options']], ['dropdown', ['options', 0, 'label']], ['dropdown', ['options', 0, 'value']],
  ['file', ['fileUrl']],
  ['image', ['imageUrl']],
  ['location', ['latitude']], ['location', ['longitude']],
  ['markdown', ['markdown']],
  ['text', ['text']],
  ['video', ['videoUrl']],
  ['bloc', ['items']],
  ['bloc', ['items', 0, 'text']], ['bloc', ['items', 2, 'imageUrl']], ['bloc', ['items', 6, 'latitude']],
]

/** Every minLength-1 string, as paths into VALID[type]. */
const NON_EMPTY: [string, Path][] = [
  ['audio', ['audioUrl']],
  ['card', ['title']], ['card', ['subtitle']], ['card', ['imageUrl']],
  ['card', ['actions', 0, 'label']], ['card', ['actions', 0, 'value']],
  ['carousel', ['items', 0, 'title']], ['carousel', ['items', 0, 'subtitle']], ['carousel', ['items', 0, 'imageUrl']],
  ['carousel', ['items', 1, 'actions', 2, 'label']], ['carousel', ['items', 1, 'actions', 2, 'value']],
  ['choice', ['text']], ['choice', ['options', 1, 'label']], ['choice', ['options', 1, 'value']],
  ['dropdown', ['text']], ['dropdown', ['options', 0, 'label']], ['dropdown', ['options', 0, 'value']],
  ['file', ['fileUrl']], ['file', ['title']],
  ['image', ['imageUrl']],
  ['markdown', ['markdown']],
  ['text', ['text']],
  ['video', ['videoUrl']],
  ['bloc', ['items', 0, 'text']], ['bloc', ['items', 1, 'markdown']], ['bloc', ['items', 5, 'title']],
]

/** Objects that must refuse an unknown key. */
const CLOSED_OBJECTS: [string, Path][] = [
  ...Object.keys(VALID).map((type): [string, Path] => [type, []]),
  ['card', ['actions', 0]],
  ['carousel', ['items', 0]],
  ['carousel', ['items', 0, 'actions', 0]],
  ['choice', ['options', 0]],
  ['dropdown', ['options', 0]],
  ['bloc', ['items', 0]],
  ['bloc', ['items', 6]],
]

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
const label = (path: Path) => (path.length === 0 ? '(payload)' : path.join('.'))

function at(root: JsonObj, path: Path): { parent: Record<string | number, Json>; key: string | number } {
  let node: Json = root
  for (const step of path.slice(0, -1)) node = (node as Record<string | number, Json>)[step] as Json
  return { parent: node as Record<string | number, Json>, key: path[path.length - 1]! }
}

function without(type: string, path: Path): JsonObj {
  const payload = clone(VALID[type]!)
  const { parent, key } = at(payload, path)
  if (Array.isArray(parent)) throw new Error('cannot delete from an array')
  delete parent[key]
  return payload
}

function withValue(type: string, path: Path, value: Json): JsonObj {
  const payload = clone(VALID[type]!)
  const { parent, key } = at(payload, path)
  parent[key] = value
  return payload
}

function withExtraKey(type: string, path: Path): JsonObj {
  const payload = clone(VALID[type]!)
  let node: Json = payload
  for (const step of path) node = (node as Record<string | number, Json>)[step] as Json
  ;(node as JsonObj).unexpected = 'x'
  return payload
}

describe('createMessage payload validation', () => {
  let h: Harness
  let chat: ChatClient
  let key: string
  let conversationId: string

  beforeAll(async () => {
    h = await startParley()
    chat = ChatClient.of(h)
    const user = await chat.createUser()
    key = user.key
    conversationId = (await chat.createConversation(key)).id
  })
  afterAll(async () => h.close())

  const post = (body: unknown) => chat.request<{ message: MessageView }>('POST', '/messages', { key, body })
  const postPayload = (payload: unknown) => post({ conversationId, payload })

  describe.each(Object.keys(VALID))('type %s', (type) => {
    it('accepts the full example: 201 {message}, payload stored and returned identical', async () => {
      const res = await postPayload(VALID[type])
      expect(res.status, res.text).toBe(201)
      expect(Object.keys(res.body)).toEqual(['message'])
      expect(res.body.message.payload).toEqual(VALID[type])
      expect(res.body.message.conversationId).toBe(conversationId)
      const got = await chat.request<{ message: MessageView }>('GET', `/messages/${res.body.message.id}`, { key })
      expect(got.status).toBe(200)
      expect(got.body.message).toEqual(res.body.message)
      expect(got.body.message.payload).toEqual(VALID[type])
    })

    it('accepts the minimal example (required fields only)', async () => {
      const res = await postPayload(MINIMAL[type])
      expect(res.status, res.text).toBe(201)
      expect(res.body.message.payload).toEqual(MINIMAL[type])
    })
  })

  describe('a missing required field is a 400 InvalidPayload', () => {
    it.each(REQUIRED)('%s without %j', async (type, path) => {
      expectApiError(await postPayload(without(type, path)), 400, 'InvalidPayload')
    })
  })

  describe('an empty minLength-1 string is a 400 InvalidPayload', () => {
    it.each(NON_EMPTY)('%s with empty %j', async (type, path) => {
      expectApiError(await postPayload(withValue(type, path, '')), 400, 'InvalidPayload')
    })
  })

  describe('an unknown key is a 400 InvalidPayload', () => {
    it.each(CLOSED_OBJECTS)('%s: unknown key in %j', async (type, path) => {
      expectApiError(await postPayload(withExtraKey(type, path)), 400, 'InvalidPayload')
    })
  })

  describe('wrong or missing type is a 400 InvalidPayload', () => {
    it.each([
      ['an unknown type', { type: 'sticker', text: 'x' }],
      ['a type with other case', { type: 'Text', text: 'x' }],
      ['a numeric type', { type: 1, text: 'x' }],
      ['a null type', { type: null, text: 'x' }],
      ['no type', { text: 'x' }],
      ['fields of another type', { type: 'image', text: 'x' }],
      ['a card item type other than card in a carousel', { type: 'carousel', items: [{ ...cardItem(), type: 'text' }] }],
      ['a bloc inside a bloc', { type: 'bloc', items: [{ type: 'bloc', items: [] }] }],
      ['a card inside a bloc', { type: 'bloc', items: [VALID.card!] }],
      ['a bloc item without type', { type: 'bloc', items: [{ text: 'x' }] }],
    ] as [string, Json][])('%s', async (_name, payload) => {
      expectApiError(await postPayload(payload), 400, 'InvalidPayload')
    })

    it('an unknown type is answered with the list of allowed types (the payload\'s, or a bloc item\'s)', async () => {
      const txt = expectApiError(await postPayload({ type: 'txt', text: 'x' }), 400, 'InvalidPayload')
      expect(txt.message).toBe('body/payload/type must be one of: audio, card, carousel, choice, dropdown, file, image, location, markdown, text, video, bloc; got "txt"')
      const item = expectApiError(await postPayload({ type: 'bloc', items: [{ type: 'card', title: 'x' }] }), 400, 'InvalidPayload')
      expect(item.message).toBe('body/payload/items/0/type must be one of: text, markdown, image, audio, video, file, location; got "card"')
      const numeric = expectApiError(await postPayload({ type: 1, text: 'x' }), 400, 'InvalidPayload')
      expect(numeric.message).toMatch(/^body\/payload\/type must be a string, one of: audio, card, /)
    })
  })

  describe('wrongly typed fields are a 400 InvalidPayload (no coercion)', () => {
    it.each([
      ['text as number', { type: 'text', text: 42 }],
      ['latitude as string', { type: 'location', latitude: '45.5', longitude: 1 }],
      ['longitude as null', { type: 'location', latitude: 1, longitude: null }],
      ['actions as object', { type: 'card', title: 't', actions: { 0: action('say') } }],
      ['options as string', { type: 'choice', text: 't', options: 'a,b' }],
      ['an action kind outside postback/url/say', { type: 'card', title: 't', actions: [{ action: 'call', label: 'l', value: 'v' }] }],
      ['address as number', { type: 'location', latitude: 1, longitude: 1, address: 5 }],
      ['items as string', { type: 'carousel', items: 'none' }],
      ['payload as array', [{ type: 'text', text: 'x' }]],
      ['payload as string', 'hello'],
      ['payload as null', null],
    ] as [string, Json][])('%s', async (_name, payload) => {
      expectApiError(await postPayload(payload), 400, 'InvalidPayload')
    })
  })

  describe('the body around the payload', () => {
    it('refuses an unknown top-level key with 400', async () => {
      expectApiError(await post({ conversationId, payload: VALID.text, extra: true }), 400, 'InvalidPayload')
    })

    it('refuses a caller-chosen userId, id or createdAt (no impersonation, no forged ids)', async () => {
      for (const extra of [{ userId: 'someone-else' }, { id: 'my-id' }, { createdAt: '2020-01-01T00:00:00.000Z' }, { isBot: true }]) {
        expectApiError(await post({ conversationId, payload: VALID.text, ...extra }), 400, 'InvalidPayload')
      }
    })

    it('refuses a missing payload, a missing conversationId, an empty or non-string conversationId', async () => {
      expectApiError(await post({ conversationId }), 400, 'InvalidPayload')
      expectApiError(await post({ payload: VALID.text }), 400, 'InvalidPayload')
      expectApiError(await post({ conversationId: '', payload: VALID.text }), 400, 'InvalidPayload')
      expectApiError(await post({ conversationId: 7, payload: VALID.text }), 400, 'InvalidPayload')
      expectApiError(await post({}), 400, 'InvalidPayload')
    })

    it('accepts metadata, echoes it at the message level and never inside the payload', async () => {
      const metadata = { source: 'web', nested: { a: [1, 2, { b: null }], flag: true }, n: 1.5 }
      const res = await post({ conversationId, payload: VALID.text, metadata })
      expect(res.status, res.text).toBe(201)
      expect(res.body.message.metadata).toEqual(metadata)
      expect(res.body.message.payload).toEqual(VALID.text)
      expect(res.body.message.payload).not.toHaveProperty('metadata')
      const got = await chat.request<{ message: MessageView }>('GET', `/messages/${res.body.message.id}`, { key })
      expect(got.body.message).toEqual(res.body.message)
    })

    it('accepts empty metadata and returns no metadata key when none was sent', async () => {
      const empty = await post({ conversationId, payload: VALID.text, metadata: {} })
      expect(empty.status).toBe(201)
      expect(empty.body.message.metadata).toEqual({})
      const none = await post({ conversationId, payload: VALID.text })
      expect(none.status).toBe(201)
      expect(Object.keys(none.body.message).sort()).toEqual(['conversationId', 'createdAt', 'id', 'payload', 'userId'])
    })

    it('refuses metadata that is not an object', async () => {
      for (const metadata of [[1, 2], 'text', 3, null, true]) {
        expectApiError(await post({ conversationId, payload: VALID.text, metadata }), 400, 'InvalidPayload')
      }
    })
  })

  describe('location', () => {
    it('accepts an empty address and an empty title (no minLength on them)', async () => {
      const payload = { type: 'location', latitude: 10, longitude: 20, address: '', title: '' }
      const res = await postPayload(payload)
      expect(res.status, res.text).toBe(201)
      expect(res.body.message.payload).toEqual(payload)
    })

    it('refuses coordinates that are not finite numbers (1e400 parses to Infinity and would be stored as null)', async () => {
      for (const coordinates of ['"latitude":1e400,"longitude":0', '"latitude":0,"longitude":-1e400']) {
        const res = await chat.request('POST', '/messages', { key, raw: `{"conversationId":"${conversationId}","payload":{"type":"location",${coordinates}}}` })
        expectApiError(res, 400, 'InvalidPayload')
      }
    })

    it('accepts zero, negative and fractional coordinates', async () => {
      const payload = { type: 'location', latitude: -89.999999, longitude: 0 }
      const res = await postPayload(payload)
      expect(res.status, res.text).toBe(201)
      expect(res.body.message.payload).toEqual(payload)
    })
  })

  describe('carousel', () => {
    it('accepts items carrying type "card", as the official client sends them', async () => {
      const payload = { type: 'carousel', items: [{ type: 'card', ...cardItem() }] }
      const res = await postPayload(payload)
      expect(res.status, res.text).toBe(201)
      expect(res.body.message.payload).toEqual(payload)
    })
  })

  it('stores text verbatim: whitespace, markup, emoji and non-Latin scripts', async () => {
    for (const text of [' ', '<script>alert(1)</script>', '😀👩‍👩‍👧', 'مرحبا', 'a\nb\tc', "'; DROP TABLE messages; --"]) {
      const res = await postPayload({ type: 'text', text })
      expect(res.status, res.text).toBe(201)
      const got = await chat.request<{ message: MessageView }>('GET', `/messages/${res.body.message.id}`, { key })
      expect(got.body.message.payload).toEqual({ type: 'text', text })
    }
  })

  it('lists every accepted payload back unchanged', async () => {
    const own = await chat.createConversation(key, fid('payloads'))
    const sent: JsonObj[] = Object.values(VALID)
    for (const payload of sent) await chat.createMessage(key, own.id, payload)
    const { items } = await chat.listAll<MessageView>(key, `/conversations/${own.id}/messages`, 'messages')
    expect(items.map((m) => m.payload).reverse()).toEqual(sent)
  })
})
