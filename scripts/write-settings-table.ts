/**
 * Writes the settings table of docs/operating.md from the one list of settings in src/config.ts (`npm run
 * docs:settings`); test/unit/config-settings.test.ts fails when the page and the list disagree.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { settingsTable } from '../src/config.js'

export const SETTINGS_PAGE = join(import.meta.dirname, '..', 'docs', 'operating.md')
export const START = '<!-- settings:start (generated from src/config.ts by `npm run docs:settings`) -->'
export const END = '<!-- settings:end -->'

/** The page with its table between the markers replaced by the generated one. */
export function withSettingsTable(page: string): string {
  const from = page.indexOf(START)
  const to = page.indexOf(END)
  if (from < 0 || to < from) throw new Error(`docs/operating.md has no ${START} … ${END} block`)
  return `${page.slice(0, from + START.length)}\n${settingsTable()}\n${page.slice(to)}`
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  writeFileSync(SETTINGS_PAGE, withSettingsTable(readFileSync(SETTINGS_PAGE, 'utf8')))
  console.log('docs/operating.md: settings table written')
}
