/**
 * One append path (issue #27): the store's message and event appends (Store.appendMessage, Store.appendEvent) have
 * one caller outside the store, the domain's ConversationLog (src/domain/conversation-log.ts); the Chat API, the
 * Runtime API, bot code and handoffs append through it. Read from the source: every `.appendMessage(` or
 * `.appendEvent(` call in src/ outside src/store/ must be ConversationLog's own call of the store, a call of a
 * ConversationLog (`this.log.…`), or a file's call of its own private method of that name (`this.…`).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const LOG_FILE = 'src/domain/conversation-log.ts'

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return sources(path)
    return /\.(ts|mts|js|mjs)$/.test(e.name) ? [path] : []
  })
}

/** `file:line receiver.method(` of every append call that bypasses ConversationLog. */
function bypasses(): string[] {
  const found: string[] = []
  for (const path of sources(join(ROOT, 'src'))) {
    const file = relative(ROOT, path).split('\\').join('/')
    if (file.startsWith('src/store/')) continue
    const text = readFileSync(path, 'utf8')
    for (const m of text.matchAll(/([\w$.?!\])]+)\s*\.\s*(appendMessage|appendEvent)\s*\(/g)) {
      const receiver = m[1]!
      const ownMethod = receiver === 'this' && new RegExp(`\\n\\s*(private |protected )?(async )?${m[2]}\\(`).test(text)
      const ok = (file === LOG_FILE && receiver === 'this.store') || receiver === 'this.log' || ownMethod
      if (!ok) found.push(`${file}:${text.slice(0, m.index).split('\n').length} ${receiver}.${m[2]}(`)
    }
  }
  return found
}

describe('one append path', () => {
  it('only ConversationLog calls the store\'s appendMessage / appendEvent', () => {
    expect(bypasses()).toEqual([])
    // and it does call them (the scan reads the right files)
    const log = readFileSync(join(ROOT, LOG_FILE), 'utf8')
    expect(log).toMatch(/this\.store\.appendMessage\(/)
    expect(log).toMatch(/this\.store\.appendEvent\(/)
  })
})
