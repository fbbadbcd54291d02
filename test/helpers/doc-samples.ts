/**
 * The fenced code blocks of the README and the manual, so tests run the samples people copy (a sample that goes
 * stale fails its test). Never imports vitest.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..')

export interface CodeBlock {
  /** The fence's language (`js`, `ts`, `sh`, …). */
  lang: string
  code: string
  /** Where it starts in its file (1-based, the fence's line), for failure messages. */
  line: number
  /** The nearest heading above it, without its `#`s. */
  heading: string
}

/** The fenced blocks of a page (a path from the repository's root), optionally of one language, in order. */
export function codeBlocks(page: string, lang?: string): CodeBlock[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n')
  const blocks: CodeBlock[] = []
  let heading = ''
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '')
    // A fence may be indented (a sample inside a list item): its lines lose that indentation.
    const fence = /^( *)```(\w+)/.exec(line)
    if (!fence) continue
    const indent = fence[1]!
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !lines[i]!.trimStart().startsWith('```'); i++) body.push(lines[i]!.startsWith(indent) ? lines[i]!.slice(indent.length) : lines[i]!)
    if (lang === undefined || fence[2] === lang) blocks.push({ lang: fence[2]!, code: `${body.join('\n')}\n`, line: start + 1, heading })
  }
  return blocks
}
