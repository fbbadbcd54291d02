/**
 * Every relative link of the README and the manual (docs/*.md) leads somewhere: the file exists, and a `#fragment`
 * names a heading of that file (GitHub's heading anchors). Links to other sites are not followed (no network here).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** GitHub's anchor of a heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`; repeats get -1, -2. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const counts = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const m = !fenced && /^#{1,6} (.*)$/.exec(line)
    if (!m) continue
    const base = m[1]!.trim().toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-')
    const n = counts.get(base) ?? 0
    counts.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/** The link targets of a page outside code blocks and code spans: [text](target) and ![alt](target). */
function links(markdown: string): string[] {
  const out: string[] = []
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    if (fenced) continue
    const text = line.replace(/`[^`]*`/g, '')
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) out.push(m[1]!)
  }
  return out
}

describe('the README and the manual', () => {
  it('have pages to check (the manual is there)', () => {
    expect(PAGES.length).toBeGreaterThan(10)
  })

  for (const page of PAGES) {
    it(`${page}: every relative link leads to an existing file and heading`, () => {
      const text = readFileSync(join(ROOT, page), 'utf8')
      const broken: string[] = []
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
        const [path, fragment] = target.split('#', 2) as [string, string | undefined]
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path))
        if (!existsSync(file)) {
          broken.push(`${target} (no file ${relative(ROOT, file)})`)
          continue
        }
        if (fragment !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(fragment)) {
          broken.push(`${target} (no heading #${fragment} in ${relative(ROOT, file)})`)
        }
      }
      expect(broken).toEqual([])
    })
  }

  it('the README stays a front door (about 150 lines) with the two commands a newcomer needs', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    expect(readme.split('\n').length).toBeLessThanOrEqual(180)
    expect(readme).toContain('npm install && npm start')
    expect(readme).toContain('npm test')
  })
})
