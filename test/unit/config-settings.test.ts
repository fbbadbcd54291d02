/**
 * The settings are one declarative list (SETTINGS in src/config.ts): loadConfig reads the environment only through
 * it, and the table of docs/operating.md is generated from it, so the documentation cannot drift from the code.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadConfig, readSettings, SETTINGS, unknownSettings, type Setting } from '../../src/config.js'
import { SETTINGS_PAGE, withSettingsTable } from '../../scripts/write-settings-table.js'

const entries = Object.entries(SETTINGS) as [string, Setting<unknown>][]

describe('settings', () => {
  it('docs/operating.md holds exactly the table generated from SETTINGS (run `npm run docs:settings` after a change)', () => {
    const page = readFileSync(SETTINGS_PAGE, 'utf8')
    expect(page).toBe(withSettingsTable(page))
    for (const [name] of entries) expect(page).toContain(`| \`${name}\` |`)
  })

  it('loadConfig reads the environment only through readSettings', () => {
    const source = loadConfig.toString()
    expect(source).toContain('readSettings(env)')
    expect(source.replace('readSettings(env)', '')).not.toMatch(/\benv\s*(\.|\[)/)
  })

  it('every default reads back as itself, and every setting has its documentation', () => {
    for (const [name, setting] of entries) {
      expect(setting.doc.length, name).toBeGreaterThan(5)
      if (setting.default === undefined) continue
      const raw = typeof setting.default === 'boolean' ? (setting.default ? 'on' : 'off') : String(setting.default)
      expect(setting.read(name, raw), name).toBe(setting.default)
    }
  })

  it('unset and empty values are the defaults; set values are parsed; wrong ones name the variable and what it expects', () => {
    expect(readSettings({}).PORT).toBe(3000)
    expect(readSettings({ PORT: '' }).PORT).toBe(3000)
    expect(readSettings({ PORT: '8080', PARLEY_TRUST_PROXY: 'on', PARLEY_SQLITE_SYNCHRONOUS: 'full' })).toMatchObject({ PORT: 8080, PARLEY_TRUST_PROXY: true, PARLEY_SQLITE_SYNCHRONOUS: 'FULL' })
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT must be <= 65535, got 70000/)
    expect(() => loadConfig({ PARLEY_BOT_MEMORY_MB: '4' })).toThrow(/PARLEY_BOT_MEMORY_MB must be an integer >= 8, got "4"/)
    expect(() => loadConfig({ PARLEY_TRUST_PROXY: 'maybe' })).toThrow(/PARLEY_TRUST_PROXY must be on or off, got "maybe"/)
    expect(() => loadConfig({ PARLEY_KB_MIN_SCORE: '2' })).toThrow(/PARLEY_KB_MIN_SCORE must be a number from 0 to 1/)
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"/)
    expect(() => loadConfig({ PARLEY_PUBLIC_URL: 'example.com' })).toThrow(/PARLEY_PUBLIC_URL is not a valid URL/)
  })

  it('a PARLEY_ variable that is no setting is reported with the closest name; the CLI\'s and the tests\' own are not', () => {
    expect(unknownSettings({ PARLEY_BOT_MEMORY: '256', PARLEY_TOKEN: 'x', PARLEY_TEST_STORE: 'sqlite', PARLEY_ZZZ: '1', PORT: '1' })).toEqual([
      { name: 'PARLEY_BOT_MEMORY', closest: 'PARLEY_BOT_MEMORY_MB' },
      { name: 'PARLEY_ZZZ', closest: undefined },
    ])
  })
})
