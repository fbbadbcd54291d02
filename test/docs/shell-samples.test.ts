/**
 * The manual's shell samples, checked against the code they drive (the commands themselves start servers, talk to
 * other hosts or wait for input, so they are mirrored, not run; the CLI tests run each command):
 * - every `parley …` command line names a real command, and its flags and arguments parse with that command's spec;
 * - every `NAME=value` a sample sets is a Parley setting (or a variable the CLI or the Botpress corpus script reads)
 *   and its value parses.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseCommand } from '../../src/cli/args.js'
import { findCommand } from '../../src/cli/main.js'
import { readSettings, SETTINGS } from '../../src/config.js'
import { codeBlocks } from '../helpers/doc-samples.js'

const PAGES = ['README.md', 'docs/getting-started.md', 'docs/cli.md', 'docs/knowledge.md', 'docs/scaling-out.md', 'docs/testing.md', 'docs/operating.md', 'docs/integrations.md']
const CLI_VARIABLES = new Set(['PARLEY_API_URL', 'PARLEY_TOKEN', 'PARLEY_WORKSPACE_ID', 'PARLEY_BOT_ID', 'BOT'])
/** What scripts/botpress-corpus reads from its environment (`env.NAME`), read off its files. */
const CORPUS_DIR = 'scripts/botpress-corpus'
const CORPUS_VARIABLES = new Set(readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.mjs'))
  .flatMap((f) => [...readFileSync(`${CORPUS_DIR}/${f}`, 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)))

/** The shell lines of the pages' sh blocks, continuation lines joined, comments dropped. */
function shellLines(): Array<{ where: string; line: string }> {
  const out: Array<{ where: string; line: string }> = []
  for (const page of PAGES) {
    for (const block of codeBlocks(page, 'sh')) {
      const joined = block.code.replace(/\\\n/g, ' ').split('\n')
      for (const raw of joined) {
        const line = raw.replace(/(^|\s)#.*$/, '').trim()
        if (line) out.push({ where: `${page}:${block.line}`, line })
      }
    }
  }
  return out
}

/** Each `parley …` invocation of a line (also inside `$(…)` and after `&&`, `|`), as its words. */
function parleyInvocations(line: string): string[][] {
  const found: string[][] = []
  for (const part of line.split(/&&|\||\$\(|\)|;|&(?!&)/)) {
    // `<its id>`: a value the reader fills in (one word); a bare `>`/`<` is a redirection.
    const words = (part.trim().match(/"[^"]*"|'[^']*'|<[^<>\s][^<>]*>|\S+/g) ?? []).map((w) => (/^<.+>$/.test(w) ? 'PLACEHOLDER' : w))
    const i = words.findIndex((w) => w === 'parley')
    if (i < 0 || (i > 0 && !['npx', 'link'].includes(words[i - 1]!) && !/^[A-Z_]+=/.test(words[i - 1]!))) continue
    const args = words.slice(i + 1)
    const cut = args.findIndex((w) => /^\d?[<>]/.test(w)) // a redirection ends the command's words
    found.push((cut < 0 ? args : args.slice(0, cut)).map((w) => w.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1')))
  }
  return found
}

describe('the manual\'s shell samples', () => {
  const lines = shellLines()

  it('there are samples to check', () => {
    expect(lines.length).toBeGreaterThan(20)
  })

  it('every `parley` command line names a command whose flags and arguments parse', async () => {
    const problems: string[] = []
    let checked = 0
    for (const { where, line } of lines) {
      for (const argv of parleyInvocations(line)) {
        if (argv.length === 0 || argv[0] === '--help' || argv[0] === '--version') continue
        checked++
        try {
          const { command, args } = await findCommand(argv)
          parseCommand(command.spec, args)
        } catch (err) {
          problems.push(`${where}: parley ${argv.join(' ')}: ${(err as Error).message}`)
        }
      }
    }
    expect(problems).toEqual([])
    expect(checked).toBeGreaterThan(15)
  })

  it('every variable a sample sets is a setting (or the CLI\'s) and its value parses', () => {
    const problems: string[] = []
    for (const { where, line } of lines) {
      for (const m of line.matchAll(/(?:^|\s|export\s+)([A-Z][A-Z0-9_]*)=("[^"]*"|'[^']*'|\S*)/g)) {
        const [, name, value] = m as unknown as [string, string, string]
        if (CLI_VARIABLES.has(name) || CORPUS_VARIABLES.has(name)) continue
        if (!(name in SETTINGS)) {
          problems.push(`${where}: ${name} is not a setting`)
          continue
        }
        if (value.includes('…') || value.startsWith('$')) continue // a placeholder the reader fills in
        try {
          readSettings({ [name]: value.replace(/^["'](.*)["']$/, '$1') })
        } catch (err) {
          problems.push(`${where}: ${(err as Error).message}`)
        }
      }
    }
    expect(problems).toEqual([])
  })
})
