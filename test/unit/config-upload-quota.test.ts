import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'

describe('config: PARLEY_UPLOAD_QUOTA_*', () => {
  it('defaults: 30 files and 50 MiB per webchat user per hour, 10 GiB per bot', () => {
    expect(loadConfig({}).uploadQuota).toEqual({ userFiles: 30, userBytes: 50 * 1024 * 1024, windowSeconds: 3600, botBytes: 10 * 1024 ** 3 })
  })

  it('takes each setting, 0 turning a limit off', () => {
    const config = loadConfig({ PARLEY_UPLOAD_QUOTA_USER_FILES: '0', PARLEY_UPLOAD_QUOTA_USER_BYTES: '1000', PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS: '60', PARLEY_UPLOAD_QUOTA_BOT_BYTES: '0' })
    expect(config.uploadQuota).toEqual({ userFiles: 0, userBytes: 1000, windowSeconds: 60, botBytes: 0 })
  })

  it('refuses negative and non-integer values, and a zero window', () => {
    expect(() => loadConfig({ PARLEY_UPLOAD_QUOTA_USER_FILES: '-1' })).toThrow(/PARLEY_UPLOAD_QUOTA_USER_FILES must be an integer >= 0/)
    expect(() => loadConfig({ PARLEY_UPLOAD_QUOTA_BOT_BYTES: '1.5' })).toThrow(/PARLEY_UPLOAD_QUOTA_BOT_BYTES/)
    expect(() => loadConfig({ PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS: '0' })).toThrow(/PARLEY_UPLOAD_QUOTA_WINDOW_SECONDS must be an integer >= 1/)
  })
})
