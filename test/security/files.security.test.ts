/**
 * Files API security (threats T1, T5, T6): the authn/authz matrix of every operation, tenant
 * isolation between bots and workspaces, bot API keys, path-traversal keys, Content-Disposition
 * injection, and hostile bodies.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uuidv7 } from '../../src/lib/ids.js'
import { contentDisposition } from '../../src/http/untrusted-content.js'
import { startParley, type Harness } from '../helpers/harness.js'
import {
  accountWithRole, blobFiles, botApiKey, createFile, download, expectError, listTree, ownerHeaders, secondBot, uniqueKey, upload, upsert,
  type Headers,
} from '../api/files-helpers.js'

type Op = { name: string; write: boolean; run: (headers: Headers) => Promise<LightMyRequestResponse> }

describe('Files API security', () => {
  let h: Harness
  let fileId: string
  let ops: Op[]

  beforeAll(async () => {
    h = await startParley()
    fileId = (await createFile(h, uniqueKey('matrix'), 'matrix content')).id
    ops = [
      { name: 'upsertFile', write: true, run: (headers) => h.app.inject({ method: 'PUT', url: '/v1/files', headers, payload: { key: uniqueKey('m'), size: 1 } }) },
      { name: 'listFiles', write: false, run: (headers) => h.app.inject({ method: 'GET', url: '/v1/files', headers }) },
      { name: 'getFile', write: false, run: (headers) => h.app.inject({ method: 'GET', url: `/v1/files/${fileId}`, headers }) },
      { name: 'updateFileMetadata', write: true, run: (headers) => h.app.inject({ method: 'PUT', url: `/v1/files/${fileId}`, headers, payload: { tags: { t: 'v' } } }) },
      { name: 'copyFile', write: true, run: (headers) => h.app.inject({ method: 'POST', url: `/v1/files/${fileId}/${uniqueKey('copy')}`, headers, payload: {} }) },
      { name: 'setFilePassages', write: true, run: (headers) => h.app.inject({ method: 'PUT', url: `/v1/files/${fileId}/passages`, headers, payload: { passages: [{ content: 'matrix passage' }] } }) },
      { name: 'listFileTags', write: false, run: (headers) => h.app.inject({ method: 'GET', url: '/v1/files/tags', headers }) },
      { name: 'listFileTagValues', write: false, run: (headers) => h.app.inject({ method: 'GET', url: '/v1/files/tags/t/values', headers }) },
      // Last, so that it deletes the shared file only once every other case ran; 'x-missing' keeps it for the 403 cases.
      { name: 'deleteFile', write: true, run: (headers) => h.app.inject({ method: 'DELETE', url: `/v1/files/${headers['x-delete-target'] ?? 'no-such-file-key'}`, headers, payload: {} }) },
    ]
  })
  afterAll(async () => h?.close())

  describe('authentication (401 Unauthorized)', () => {
    it('no token, a forged token, a malformed header: 401 for every operation', async () => {
      const cases: [string, Headers][] = [
        ['no token', { 'x-bot-id': h.credentials.botId }],
        ['forged PAT', { authorization: 'Bearer pat_forged0000000000000000000000000000000', 'x-bot-id': h.credentials.botId }],
        ['forged bot key', { authorization: 'Bearer bak_forged0000000000000000000000000000000', 'x-bot-id': h.credentials.botId }],
        ['token with a flipped character', { authorization: `Bearer ${h.credentials.token.slice(0, -1)}${h.credentials.token.endsWith('A') ? 'B' : 'A'}`, 'x-bot-id': h.credentials.botId }],
        ['Basic scheme', { authorization: `Basic ${Buffer.from(`x:${h.credentials.token}`).toString('base64')}`, 'x-bot-id': h.credentials.botId }],
        ['empty bearer', { authorization: 'Bearer ', 'x-bot-id': h.credentials.botId }],
        ['oversized token', { authorization: `Bearer ${'a'.repeat(5000)}`, 'x-bot-id': h.credentials.botId }],
      ]
      for (const op of ops) {
        for (const [label, headers] of cases) {
          const res = await op.run(headers)
          expect(res.statusCode, `${op.name} with ${label}`).toBe(401)
          expectError(res, 401, 'Unauthorized')
        }
      }
    })

    it('missing or unknown x-bot-id: 401 for every operation', async () => {
      for (const op of ops) {
        expectError(await op.run({ authorization: `Bearer ${h.credentials.token}` }), 401, 'Unauthorized')
        expectError(await op.run(ownerHeaders(h, { 'x-bot-id': 'no-such-bot' })), 401, 'Unauthorized')
        expectError(await op.run(ownerHeaders(h, { 'x-bot-id': 'x'.repeat(500) })), 401, 'Unauthorized')
      }
    })
  })

  describe('authorization (403 Forbidden)', () => {
    it('a PAT of an account that is not a member of the bot\'s workspace: 403 for every operation', async () => {
      const outsider = await accountWithRole(h, null)
      for (const op of ops) expectError(await op.run(ownerHeaders(h, { authorization: `Bearer ${outsider.token}` })), 403, 'Forbidden')
    })

    it('the owner of another workspace is an outsider here: 403', async () => {
      const other = await accountWithRole(h, null)
      const now = Date.now()
      const workspaceId = uuidv7()
      await h.store.createWorkspace({ id: workspaceId, name: 'Other workspace', createdAt: now, updatedAt: now })
      await h.store.addWorkspaceMember(workspaceId, other.accountId, 'owner', now)
      for (const op of ops) expectError(await op.run(ownerHeaders(h, { authorization: `Bearer ${other.token}` })), 403, 'Forbidden')
      // …while on its own workspace's bot it may do everything.
      const { bot } = await h.app.services.bots.createBot(workspaceId, { name: 'Their bot' })
      const theirs = { authorization: `Bearer ${other.token}`, 'x-bot-id': bot.id }
      expect((await upsert(h, { key: 'theirs.txt', size: 1 }, theirs)).statusCode).toBe(200)
      // The demo workspace's owner, in turn, is an outsider on that bot.
      expectError(await upsert(h, { key: 'x', size: 1 }, ownerHeaders(h, { 'x-bot-id': bot.id })), 403, 'Forbidden')
    })

    it('a viewer may read (list, get) but not write (upsert, update, delete): 403', async () => {
      const viewer = await accountWithRole(h, 'viewer')
      const headers = ownerHeaders(h, { authorization: `Bearer ${viewer.token}`, 'x-delete-target': fileId })
      for (const op of ops) {
        const res = await op.run(headers)
        if (op.write) expectError(res, 403, 'Forbidden')
        else expect(res.statusCode, `${op.name}: ${res.body}`).toBe(200)
      }
      expect((await h.app.inject({ method: 'GET', url: `/v1/files/${fileId}`, headers: ownerHeaders(h) })).statusCode).toBe(200)
    })

    it('billing may not even read; developer may read and write', async () => {
      const billing = await accountWithRole(h, 'billing')
      for (const op of ops) expectError(await op.run(ownerHeaders(h, { authorization: `Bearer ${billing.token}` })), 403, 'Forbidden')
      const developer = await accountWithRole(h, 'developer')
      const headers = ownerHeaders(h, { authorization: `Bearer ${developer.token}` })
      for (const op of ops.filter((o) => o.name !== 'deleteFile')) {
        const res = await op.run(headers)
        expect(res.statusCode, `${op.name}: ${res.body}`).toBe(200)
      }
    })
  })

  describe('tenant isolation (T1)', () => {
    it('another bot\'s file is 404 (not 403) by id and by key, for get, update and delete; lists never show it', async () => {
      const otherBot = await secondBot(h)
      const otherHeaders = ownerHeaders(h, { 'x-bot-id': otherBot })
      const key = uniqueKey('iso')
      const theirs = await createFile(h, key, 'theirs', { tags: { iso: key } }, otherHeaders)
      for (const idOrKey of [theirs.id, key]) {
        const target = encodeURIComponent(idOrKey)
        expectError(await h.app.inject({ method: 'GET', url: `/v1/files/${target}`, headers: ownerHeaders(h) }), 404, 'ResourceNotFound')
        expectError(await h.app.inject({ method: 'PUT', url: `/v1/files/${target}`, headers: ownerHeaders(h), payload: { tags: { a: 'b' } } }), 404, 'ResourceNotFound')
        expectError(await h.app.inject({ method: 'DELETE', url: `/v1/files/${target}`, headers: ownerHeaders(h), payload: {} }), 404, 'ResourceNotFound')
      }
      const mine = (await h.app.inject({ method: 'GET', url: `/v1/files?tags.iso=${key}&ids=${theirs.id}`, headers: ownerHeaders(h) })).json()
      expect(mine.files).toEqual([])
      const byIds = (await h.app.inject({ method: 'GET', url: `/v1/files?ids=${theirs.id}`, headers: ownerHeaders(h) })).json()
      expect(byIds.files).toEqual([])
      // Untouched on its own bot.
      const still = await h.app.inject({ method: 'GET', url: `/v1/files/${theirs.id}`, headers: otherHeaders })
      expect(still.json().file).toMatchObject({ id: theirs.id, botId: otherBot, tags: { iso: key } })
      // The same key is independent in each bot: upserting it on the demo bot creates a new file.
      const same = (await upsert(h, { key, size: 1 })).json().file
      expect(same.id).not.toBe(theirs.id)
      expect(same.botId).toBe(h.credentials.botId)
    })

    it('a bot API key works only for its own bot (owner type "bot"); for another bot it is 403', async () => {
      const key = await botApiKey(h, h.credentials.botId)
      const own = { authorization: `Bearer ${key}`, 'x-bot-id': h.credentials.botId }
      const created = await upsert(h, { key: uniqueKey('bak'), size: 1 }, own)
      expect(created.statusCode, created.body).toBe(200)
      expect(created.json().file.owner).toEqual({ type: 'bot', id: h.credentials.botId })
      for (const op of ops) {
        const res = await op.run({ ...own, 'x-delete-target': created.json().file.id })
        expect(res.statusCode, `${op.name}: ${res.body}`).toBe(200)
      }
      const otherBot = await secondBot(h)
      for (const op of ops) expectError(await op.run({ authorization: `Bearer ${key}`, 'x-bot-id': otherBot }), 403, 'Forbidden')
      // The other bot's own key cannot reach the demo bot either.
      const otherKey = await botApiKey(h, otherBot)
      for (const op of ops) expectError(await op.run({ authorization: `Bearer ${otherKey}`, 'x-bot-id': h.credentials.botId }), 403, 'Forbidden')
    })

    it('signed URL routes ignore bearer tokens: a private file without signature stays 404 even with valid credentials', async () => {
      const file = await createFile(h, uniqueKey('nobearer'), 'private')
      const bare = new URL(file.url).pathname
      expectError(await h.app.inject({ method: 'GET', url: bare, headers: ownerHeaders(h) }), 404, 'ResourceNotFound')
    })
  })

  describe('path traversal via keys (T5)', () => {
    it('hostile keys are opaque strings or refused (400); no file is created outside the blob root', async () => {
      const before = listTree(h.dataDir)
      const opaque = [
        '../../etc/passwd', '..\\..\\windows\\win.ini', '..\\x', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '%252e%252e%252f', '/etc/passwd', '/',
        'C:\\Windows\\System32\\drivers\\etc\\hosts', '\\\\server\\share\\x', 'trailing dot.', 'trailing space ', '．．／．．／etc／passwd',
        '..', '.', 'blobs/tmp/x.part', 'file:///etc/passwd', '~/.ssh/id_rsa', `${'../'.repeat(300)}etc/passwd`,
      ]
      for (const key of opaque) {
        const file = await createFile(h, key, `content of ${key}`)
        expect(file.key).toBe(key)
        const byId = await h.app.inject({ method: 'GET', url: `/v1/files/${file.id}`, headers: ownerHeaders(h) })
        expect(byId.json().file.key).toBe(key)
        // "." and ".." are dot-segments: every URL parser (the official client's too) removes them
        // before the request is sent, so those two keys are reachable by id only.
        if (key !== '.' && key !== '..') {
          const byKey = await h.app.inject({ method: 'GET', url: `/v1/files/${encodeURIComponent(key)}`, headers: ownerHeaders(h) })
          expect(byKey.statusCode, `${key}: ${byKey.body}`).toBe(200)
          expect(byKey.json().file.id, key).toBe(file.id)
        }
        expect((await download(h, file.url)).body).toBe(`content of ${key}`)
      }
      for (const key of ['a\u0000b', '\u0000', 'x'.repeat(1025), 'line\nbreak', 'cr\rlf', 'tab\there', 'del\u007f']) {
        expectError(await upsert(h, { key, size: 1 }), 400, 'InvalidPayload')
      }

      const after = listTree(h.dataDir)
      const added = after.filter((p) => !before.includes(p))
      expect(added.length).toBe(opaque.length)
      for (const path of added) expect(path).toMatch(/^blobs\/[0-9a-f]{2}\/[0-9a-f]{32}$/)
      // Nothing else in the data dir changed names, and nothing named after a key exists anywhere in it.
      expect(before.filter((p) => !after.includes(p))).toEqual([])
      expect(after.some((p) => /passwd|win\.ini|hosts|id_rsa/.test(p))).toBe(false)
      expect(existsSync(join(h.dataDir, '..', 'etc', 'passwd'))).toBe(false)
      expect(readFileSync('/etc/passwd', 'utf8')).not.toContain('content of')
    })

    it('an unencoded ../ in the URL never reaches the handler as a key', async () => {
      const res = await h.app.inject({ method: 'GET', url: '/v1/files/../../etc/passwd', headers: ownerHeaders(h) })
      expect(res.statusCode).toBeGreaterThanOrEqual(400)
      expect(res.statusCode).toBeLessThan(500)
      expect(res.json()).toMatchObject({ code: res.statusCode })
    })
  })

  describe('Content-Disposition from keys (T5)', () => {
    it('quotes, backslashes, semicolons, percent signs, CR/LF look-alikes and Unicode never break the header', async () => {
      const keys = [
        'say "hello".txt', 'back\\slash.txt', 'semi;colon=1.txt', 'per%0d%0acent.txt', "it's (ok)*.txt", 'ünïcødé ✓ 😀.pdf',
        'dir/sub/名前.txt', 'attachment; filename=evil.exe', 'x\u2028y\u2029z.txt', 'right\u202eto\u202dleft.txt', '"', ';',
      ]
      for (const key of keys) {
        const file = await createFile(h, key, 'x')
        const res = await download(h, file.url)
        expect(res.statusCode, key).toBe(200)
        const header = String(res.headers['content-disposition'])
        expect(header).not.toMatch(/[\r\n]/)
        // `inline|attachment; filename="<ascii without quotes>"; filename*=UTF-8''<attr-chars>` (attachment for the types a
        // browser does not display: src/http/untrusted-content.ts)
        const match = /^(?:inline|attachment); filename="([\x20-\x7e]*)"; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]+)$/.exec(header)
        expect(match, `${key} → ${header}`).not.toBeNull()
        expect(match![1]).not.toMatch(/["\\]/)
        // The name is the key's last path segment ('/' or '\\'), so a client saves "名前.txt", not "dir/sub/名前.txt".
        const expectedName = key.split(/[\\/]/).pop()!
        expect(decodeURIComponent(match![2]!), key).toBe(expectedName)
      }
    })
  })

  describe('Content-Disposition builder (defence in depth)', () => {
    it('never emits CR, LF or a raw quote even for keys the API would refuse', () => {
      for (const key of ['a\r\nSet-Cookie: x=1', 'x"; filename="evil.exe', '\u0000nul', 'ok\u0085next', '\ud800lone', '../..', '']) {
        const header = contentDisposition(key)
        expect(header, JSON.stringify(key)).not.toMatch(/[\r\n\u0000\u0085]/)
        expect(header).toMatch(/^inline; filename="[^"\\]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/)
      }
      expect(contentDisposition('dir/report.pdf', 'attachment')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`)
    })
  })

  describe('hostile bodies (T6, T9)', () => {
    it('deep nesting, __proto__ keys, NUL in metadata and malformed JSON are 400; non-JSON bodies are 415', async () => {
      let deep: unknown = 'leaf'
      for (let i = 0; i < 200; i++) deep = { d: deep }
      expectError(await upsert(h, { key: uniqueKey(), size: 1, metadata: deep as Record<string, unknown> }), 400, 'InvalidPayload')
      const proto = await h.app.inject({
        method: 'PUT', url: '/v1/files', headers: { ...ownerHeaders(h), 'content-type': 'application/json' },
        payload: `{"key":"${uniqueKey()}","size":1,"metadata":{"__proto__":{"admin":true}}}`,
      })
      expectError(proto, 400, 'InvalidPayload')
      expectError(await upsert(h, { key: uniqueKey(), size: 1, metadata: { a: 'nul\u0000' } }), 400, 'InvalidPayload')
      const malformed = await h.app.inject({ method: 'PUT', url: '/v1/files', headers: { ...ownerHeaders(h), 'content-type': 'application/json' }, payload: '{"key":' })
      expectError(malformed, 400, 'InvalidPayload')
      const form = await h.app.inject({ method: 'PUT', url: '/v1/files', headers: { ...ownerHeaders(h), 'content-type': 'text/plain' }, payload: 'key=x' })
      expectError(form, 415, 'UnsupportedMediaType')
    })

    it('a hostile upload cannot create blobs without a valid signature', async () => {
      const before = blobFiles(h)
      for (const token of ['..%2F..%2Fetc%2Fpasswd', 'a.b', `${'A'.repeat(2000)}`]) {
        const res = await h.app.inject({ method: 'PUT', url: `/v1/files/uploads/${token}`, payload: 'evil' })
        expect(res.statusCode).toBeGreaterThanOrEqual(400)
        expect(res.statusCode).toBeLessThan(500)
      }
      expect(blobFiles(h)).toEqual(before)
      // And a valid URL only ever writes the file it was issued for.
      const a = (await upsert(h, { key: uniqueKey('a'), size: 1 })).json().file
      const b = await createFile(h, uniqueKey('b'), 'B')
      await upload(h, a.uploadUrl, 'A')
      expect((await download(h, b.url)).body).toBe('B')
    })
  })
})
